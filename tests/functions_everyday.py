"""User-style functions with everyday Python constructs srcgrad lowers (issue 18,
items 3-5): ``with np.errstate(...)`` blocks, in a module of their own so that autograd
can run the same source (``autograd_oracle.autograd_twin``)."""

from __future__ import annotations

import dataclasses
import functools
import typing

import numpy as np
from helpers_for_calls import apply_scaled


def safe_log_loss(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(x)
        terms = np.where(np.isfinite(logs), logs * y, 0.0)
    return np.sum(terms * x)


def _softplus(v):
    with np.errstate(over="ignore"):
        e = np.exp(v)
    return np.log1p(e)


def errstate_in_a_loop_and_a_helper(x):
    total = 0.0
    for k in range(1, 3):
        with np.errstate(under="ignore"):
            total = total + np.sum(_softplus(x * k) * x)
    return total


def errstate_around_the_return(x):
    y = x * x
    with np.errstate(all="ignore"):
        return np.sum(np.sqrt(y + 1.0) / x)


def errstate_raising(x):
    with np.errstate(divide="raise"):
        y = np.log(x)
    return np.sum(y)


def errstate_named(x):
    with np.errstate(divide="ignore") as state:
        y = np.log(x) * len(str(state))
    return np.sum(y)


def another_context(x, path):
    with open(path) as handle:
        y = np.log(x) * len(handle.read())
    return np.sum(y)


# -- functions defined inside the function (written out where they are called) --------


def closure_layers(x, w):
    def layer(h):
        z = h @ w
        return np.tanh(z)

    sq = lambda t: t * t  # noqa: E731 (the construct under test)
    y = layer(x)
    return np.sum(sq(layer(y)))


def closure_late_binding(x):
    scale = x * 2.0

    def scaled(v, power=2):
        return scale * v**power

    first = scaled(x)
    scale = np.sin(x)  # the closure reads the new value when called next
    return np.sum(first + scaled(x, power=3))


def closure_with_control_flow(x, n):
    def step(h, k):
        total = h
        for j in range(k):
            if j % 2 == 0:
                total = total + np.cos(total) * x
            else:
                total = total * 0.5
        return total

    h = x
    for k in range(n):
        h = step(h, k)
    return np.sum(h * h)


def closure_in_a_comprehension(x, w):
    cube = lambda v: v * v * v  # noqa: E731

    def weighted(v, *, by):
        return cube(v) * by

    terms = [weighted(x[i], by=w[i]) for i in range(len(x)) if x[i] > -10]
    return sum(terms)


def closure_shadowing(x):
    h = x * 3.0

    def f(v):
        h = v * v  # the closure's own h: the function's is left as it is
        return h + 1.0

    y = f(x)
    return np.sum(y * h)


def closure_returned(x):
    def g(y):
        return y * x

    return g


def closure_passed_on(x):
    def g(y):
        return y * y

    return np.sum(apply_to(g, x))


def apply_to(g, x):
    return g(x)


def closure_in_a_branch(x):
    if np.sum(x) > 0:

        def g(y):
            return y * y

        return np.sum(g(x))
    return np.sum(x)


def closure_recursive(x):
    def g(y, n):
        return y if n == 0 else g(y * y, n - 1)

    return np.sum(g(x, 2))


def closure_default_computed(x):
    s = np.sum(x)

    def g(y, by=s):
        return y * by

    return np.sum(g(x))


def closure_early_return(x):
    def g(y):
        if np.sum(y) > 0:
            return y
        return -y

    return np.sum(g(x))


def closure_nonlocal(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return total

    add(x)
    return np.sum(total)


def closure_called_conditionally(x):
    g = lambda y: y * y  # noqa: E731
    return np.sum(g(x) if np.sum(x) > 0 else x)


# -- callables: functools.partial, objects with __call__ ------------------------------


def decay(y, k, *, rate=1.0):
    return -k * rate * y * y


def rk_step(f, y, dt):
    k1 = f(y)
    return y + dt * f(y + 0.5 * dt * k1)


def integrate(f, y0):
    y = y0
    for _ in range(3):
        y = rk_step(f, y, 0.1)
    return np.sum(y * y)


def apply_weighted(f, x):
    return np.sum(f(x) * x)


def partial_made_inside(theta, y0):
    f = functools.partial(decay, rate=theta)
    y = f(y0, 0.3) + f(y0, k=0.7, rate=1.5)  # (a keyword of the call wins)
    return np.sum(y * y)


def partial_of_a_passed_function(theta, g, y0):
    f = functools.partial(g, theta)
    return np.sum(f(y0))


def scaled_sine(a, y):
    return np.sin(a * y)


def partial_made_inside_passed_on(theta, y0):
    f = functools.partial(decay, k=theta)
    return integrate(f, y0)


def partial_of_a_variable(theta, y0):
    g = decay if theta > 0 else scaled_sine
    f = functools.partial(g, y0)
    return np.sum(f(theta))


class Scaled:
    """A callable object: ``Scaled(w)(x)`` is ``sin(x) * w``."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.sin(x) * self.w


@dataclasses.dataclass
class ScaledRecord:
    """A dataclass compared by value, so unhashable: refused as a function argument."""

    w: float

    def __call__(self, x):
        return np.sin(x) * self.w


@dataclasses.dataclass(frozen=True)
class FrozenScaled:
    """A frozen dataclass is hashable: called like any object with __call__."""

    w: float

    def __call__(self, x):
        return np.sin(x) * self.w


class Model:
    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return np.sin(x * self.w)


class Record(Model):
    """A model compared by value: its bound methods cannot key the code made for them."""

    def __eq__(self, other):
        return isinstance(other, Record) and np.array_equal(self.w, other.w)

    def __hash__(self):
        return 0


# -- *args in the functions called, *seq and **dict in calls ---------------------------


def products(*xs):
    a, b, c = xs
    return a * b + np.sin(c) * len(xs) + sum(xs)


def weighted_sum(w, *xs, scale=1.0):
    return sum(xs) * w * scale


def squares(*xs):
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def star_args_called(x, y):
    a = products(x, y, x * y)
    b = weighted_sum(2.0, *(x, np.sin(y)), scale=0.5)
    c = weighted_sum(**{"w": 3.0, "scale": 2.0})
    return np.sum(a + b) + c


def star_args_passed_on(x, y):
    pair = (x, np.cos(y))
    return np.sum(weighted_sum(1.5, *pair) + products(*(x, y), y))


def star_args_in_a_loop(x, y):
    return np.sum(squares(x, y, x * y))


def star_args_unknown_position(x, y):
    pair = (x, y)
    return np.sum(weighted_sum(1.5, *pair, x))


def star_args_differentiated(*xs):
    return np.sum(xs[0] * xs[1])


def kwargs_called(x):
    return np.sum(takes_kwargs(x, scale=2.0))


def takes_kwargs(x, **options):
    return x * options["scale"]


# -- namedtuple and dataclass parameters (pytrees) -------------------------------------


class Layer(typing.NamedTuple):
    w: np.ndarray
    b: float


@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: float

    def apply(self, x):
        return x @ self.w + self.b


@dataclasses.dataclass(frozen=True)
class Settings:
    scale: float
    power: int


def layer_loss(p, x):
    return np.sum(np.tanh(x @ p.w + p.b) ** 2)


def _layer_output(p, x):
    return np.sin(x @ p.w)


def layers_through_a_helper(p, x, settings):
    h = _layer_output(p, x) * p.b
    return np.sum(h**settings.power) * settings.scale


def stacked_layers(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.w + layer.b)
    return np.sum(h * h)


def dataclass_method(p, x):
    return np.sum(p.apply(x))


def dataclass_used_whole(p, x):
    scale = 2.0 if isinstance(p, Dense) else 3.0
    return np.sum(x @ p.w) * scale


def dataclass_not_a_field(p, x):
    return np.sum(x @ p.w) * p.missing


# -- dicts built in the function ------------------------------------------------------


def dict_read_back(w, b, x):
    params = {"w": w * 2.0, "b": b}
    other = dict(scale=0.5, shift=np.sin(b))
    y = np.tanh(x @ params["w"] + params["b"]) * other["scale"] + other["shift"]
    total = 0.0
    for key, value in params.items():
        weight = 2.0 if key == "w" else 1.0
        total = total + np.sum(value * value) * weight
    for value in other.values():
        total = total + value
    return np.sum(y * y) + total


def dict_of_metrics(w, x):
    loss = np.sum(np.sin(x @ w) ** 2)
    metrics = {"loss": loss, "norm": np.sqrt(np.sum(w * w))}
    return loss, metrics


def dict_display_returned(w, x):
    loss = np.sum(np.sin(x @ w) ** 2)
    return loss, {"loss": loss, 2: np.max(w)}


def dict_written_into(w, x):
    d = {"w": w}
    d["w"] = w * 2.0
    return np.sum(d["w"] * x)


def dict_written_in_a_loop(w, x):
    d = {"w": w}
    for _ in range(2):
        d["w"] = d["w"] * 2.0
    return np.sum(d["w"] * x)


def dict_passed_on(w, x):
    d = {"w": w}
    return _reads_w(d, x)


def _reads_w(p, x):
    return np.sum(p["w"] * x)


def dict_read_by_a_variable(w, x):
    d = {"w": w}
    key = "w"
    return np.sum(d[key] * x)


def _affine(w, b, x):
    return x @ w + b


def tuple_spread_into_a_call(w, b, x):
    params = (w, b)
    y = _affine(*params, x=x)
    triple = (w, b * 2.0, x)
    return np.sum(np.tanh(y) * _affine(*triple))


def tuple_of_the_wrong_length(w, b, x):
    params = (w, b, x, x)
    return np.sum(_affine(*params))


# -- functions defined here passed to a module function: it is written out where it is
# called, calling the function it is given where it calls its parameter ---------------
def lambda_passed_on(x):
    k = np.sum(x)
    return np.sum(apply_to(lambda t: np.sin(t) * k, x))


def rk2_step(f, y, dt):
    k1 = f(y)
    k2 = f(y + dt * k1)
    return y + dt / 2 * (k1 + k2)


def integrate_rk2(f, y, steps, dt):
    for _ in range(steps):
        y = rk2_step(f, y, dt)
    return y


def closure_passed_two_levels_down(theta, y0):
    def rhs(y):
        return -theta * y + np.sin(y)

    y = integrate_rk2(rhs, y0, 4, 0.1)
    return np.sum(y**2)


def lambdas_passed_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(apply_to(lambda t: t ** (i + 1), x))  # noqa: B023 (called at once)
    return total


def assigns_its_parameter(g, x):
    g = np.tanh
    return g(x)


def closure_passed_to_one_that_rebinds_it(x):
    return np.sum(assigns_its_parameter(lambda t: t * 2.0, x))


SCALE = 2.0


def lambda_passed_to_another_module(x):
    k = 3.0
    return apply_scaled(lambda t: np.sin(t) * k * SCALE, x)  # (its k and SCALE: these)


def lambda_passed_by_keyword_reads_late(x):
    k = 2.0
    g = lambda t: t * k  # noqa: E731 (a lambda bound to a name is what is tested)
    k = 3.0  # (the closure reads k when called: 3.0)
    return apply_scaled(x=x, f=g)
