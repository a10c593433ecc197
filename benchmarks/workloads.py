"""The benchmark workloads: for each, the primal in plain numpy as a user writes
it, a hand-written numpy gradient made as fast as we could (reusing the forward
pass's intermediates, in place where that helps), input makers with a fixed seed,
and the same primal for the other libraries where plain numpy does not do.

``benchmarks/run.py`` imports this module after it has limited BLAS to one
thread. The jax.numpy and autograd.numpy forms are the numpy primal itself with
the name ``np`` bound to that module (:func:`rebind`): both are drop-in numpy
replacements for this code. torch needs its own spelling of a few calls, so each
workload has an explicit torch form (the scalar loop is plain arithmetic and is
its own torch form).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    import torch
except ImportError:  # the torch forms are only called when torch is installed
    torch = None


@dataclass
class Workload:
    name: str
    description: str
    f: Callable[..., Any]  # the primal, plain numpy
    wrt: tuple[int, ...]  # positional indices differentiated
    make_args: Callable[[], tuple]
    hand: Callable[..., Any]  # the hand-written gradient: a tuple when len(wrt) > 1
    torch_f: Callable[..., Any]  # the same primal in torch
    static_argnums: tuple[int, ...] = ()  # for jax.jit: Python ints the loop counts on


def rebind(f: Callable[..., Any], module: Any) -> Callable[..., Any]:
    """``f`` with the global name ``np`` bound to ``module`` (jax.numpy, autograd.numpy),
    and so are the functions of this module it calls (``power_loss`` calls ``power``,
    which calls itself)."""
    namespace = dict(f.__globals__)
    namespace["np"] = module
    for name, value in f.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is f.__globals__:
            namespace[name] = _with_globals(value, namespace)
    return _with_globals(f, namespace)


def _with_globals(f: types.FunctionType, namespace: dict) -> types.FunctionType:
    g = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__
    return g


# -- 1. logistic regression ----------------------------------------------------------


def logreg(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logreg_grad(w, X, y):
    # d/dz of the mean cross-entropy is (sigmoid(z) - y) / n
    p = X @ w
    np.negative(p, out=p)
    np.exp(p, out=p)
    p += 1.0
    np.reciprocal(p, out=p)
    p -= y
    g = p @ X
    g *= 1.0 / X.shape[0]
    return g


def logreg_torch(w, X, y):
    p = 1 / (1 + torch.exp(-(X @ w)))
    return -torch.mean(y * torch.log(p) + (1 - y) * torch.log(1 - p))


def logreg_args():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 100))
    w = 0.1 * rng.standard_normal(100)
    y = (rng.random(2000) < 0.5).astype(np.float64)
    return w, X, y


# -- 2. two-layer MLP, softmax cross-entropy -------------------------------------------


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def mlp_grad(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    z = h @ W2
    z += b2
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)  # softmax
    z -= Y  # the rows of Y are one-hot: dloss/dz = (softmax - Y) / n
    z *= 1.0 / n
    dW2 = h.T @ z
    db2 = z.sum(axis=0)
    dh = z @ W2.T
    np.multiply(h, h, out=h)
    np.subtract(1.0, h, out=h)
    dh *= h  # through tanh
    dW1 = X.T @ dh
    db1 = dh.sum(axis=0)
    return dW1, db1, dW2, db2


def mlp_torch(W1, b1, W2, b2, X, Y):
    h = torch.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    z = z - torch.max(z, dim=1, keepdim=True).values
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.sum(Y * logp) / X.shape[0]


def mlp_args():
    rng = np.random.default_rng(2)
    W1 = rng.standard_normal((784, 256)) / np.sqrt(784)
    b1 = 0.1 * rng.standard_normal(256)
    W2 = rng.standard_normal((256, 10)) / np.sqrt(256)
    b2 = 0.1 * rng.standard_normal(10)
    X = rng.standard_normal((128, 784))
    Y = np.eye(10)[rng.integers(0, 10, 128)]
    return W1, b1, W2, b2, X, Y


# -- 3. tanh RNN, a Python for loop over 50 steps --------------------------------------


def rnn(Wh, Wx, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
    return np.sum(h * h)


def rnn_grad(Wh, Wx, xs, h0):
    T, B, D = xs.shape
    H = Wh.shape[0]
    hs = np.empty((T + 1, B, H))  # every state, for the backward sweep
    hs[0] = h0
    # all input projections in one matrix product
    a = (xs.reshape(T * B, D) @ Wx).reshape(T, B, H)
    for t in range(T):
        h = hs[t + 1]
        np.matmul(hs[t], Wh, out=h)
        h += a[t]
        np.tanh(h, out=h)
    # tanh's derivative at every step at once, into the same buffer; then each step's
    # pre-activation adjoint is written over its own derivative
    da = a
    np.multiply(hs[1:], hs[1:], out=da)
    np.subtract(1.0, da, out=da)
    dh = 2.0 * hs[T]
    WhT = Wh.T
    for t in range(T - 1, 0, -1):
        da[t] *= dh
        dh = da[t] @ WhT
    da[0] *= dh
    da = da.reshape(T * B, H)
    dWh = hs[:T].reshape(T * B, H).T @ da
    dWx = xs.reshape(T * B, D).T @ da
    return dWh, dWx


def rnn_torch(Wh, Wx, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = torch.tanh(h @ Wh + xs[t] @ Wx)
    return torch.sum(h * h)


def rnn_args():
    rng = np.random.default_rng(3)
    Wh = rng.standard_normal((64, 64)) / 8.0
    Wx = rng.standard_normal((8, 64)) / np.sqrt(8)
    xs = rng.standard_normal((50, 16, 8))
    h0 = 0.1 * rng.standard_normal((16, 64))
    return Wh, Wx, xs, h0


# -- 4. scalar Euler loop on Python floats ----------------------------------------------


def euler(k, x0, v0, dt, n):
    x = x0
    v = v0
    for _ in range(n):
        a = -k * x - 0.1 * v
        x = x + dt * v
        v = v + dt * a
    return x * x


def euler_grad(k, x0, v0, dt, n):
    # one parameter: carry the sensitivities dx/dk, dv/dk along (no tape needed)
    x = x0
    v = v0
    dx = 0.0
    dv = 0.0
    for _ in range(n):
        a = -k * x - 0.1 * v
        da = -x - k * dx - 0.1 * dv
        x = x + dt * v
        dx = dx + dt * dv
        v = v + dt * a
        dv = dv + dt * da
    return 2.0 * x * dx


def euler_args():
    return 2.0, 1.0, 0.0, 0.01, 2000


def euler2(k, c, x0, v0, dt, n):
    x = x0
    v = v0
    for _ in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
    return x * x


def euler2_grad(k, c, x0, v0, dt, n):
    # two parameters: carry dx/dk, dv/dk, dx/dc, dv/dc forward in the one loop
    x = x0
    v = v0
    dx_k = dv_k = dx_c = dv_c = 0.0
    for _ in range(n):
        a = -k * x - c * v
        da_k = -x - k * dx_k - c * dv_k
        da_c = -v - k * dx_c - c * dv_c
        x = x + dt * v
        dx_k = dx_k + dt * dv_k
        dx_c = dx_c + dt * dv_c
        v = v + dt * a
        dv_k = dv_k + dt * da_k
        dv_c = dv_c + dt * da_c
    return 2.0 * x * dx_k, 2.0 * x * dx_c


def euler2_args():
    return 2.0, 0.1, 1.0, 0.0, 0.01, 2000


# -- 5. vectorised Rosenbrock, 10**6 elements -------------------------------------------


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    a = x[:-1]
    d = a * a
    np.subtract(x[1:], d, out=d)
    d *= 200.0  # d = 200 (x[1:] - x[:-1]**2), the derivative w.r.t. x[1:]
    g = np.empty_like(x)
    g[-1] = 0.0
    head = g[:-1]  # -2 (x[:-1] d + 1 - x[:-1])
    np.multiply(a, d, out=head)
    head += 1.0
    head -= a
    head *= -2.0
    g[1:] += d
    return g


def rosenbrock_torch(x):
    return torch.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_args():
    rng = np.random.default_rng(5)
    return (rng.uniform(-1.5, 1.5, 10**6),)


# -- 6. 40 elementwise operations on 10 elements ----------------------------------------


def tiny(x):
    a = np.sin(x)
    b = np.cos(x)
    c = a * b + x
    d = np.exp(-c * c)
    e = np.tanh(d + a)
    f = e / (1.0 + b * b)
    g = np.log(1.0 + d * d)
    h = f * g - c
    u = np.sqrt(1.0 + h * h)
    v = np.sin(u) * np.exp(-x * x)
    w = v / (u + 2.0)
    s = np.tanh(w * c) + f
    r = s * s * x - a
    q = np.tanh(r) + np.exp(0.1 * w)
    return np.sum(q * q + r)


def tiny_grad(x):
    # forward, keeping what the adjoints need
    a = np.sin(x)
    b = np.cos(x)
    c = a * b + x
    d = np.exp(-c * c)
    e = np.tanh(d + a)
    bb = 1.0 + b * b
    f = e / bb
    dd = 1.0 + d * d
    g = np.log(dd)
    h = f * g - c
    u = np.sqrt(1.0 + h * h)
    ex = np.exp(-x * x)
    v = np.sin(u) * ex
    u2 = u + 2.0
    w = v / u2
    tw = np.tanh(w * c)
    s = tw + f
    ss = s * s
    r = ss * x - a
    tr = np.tanh(r)
    ew = np.exp(0.1 * w)
    q = tr + ew
    # backward
    q_bar = 2.0 * q
    r_bar = 1.0 + q_bar * (1.0 - tr * tr)
    w_bar = 0.1 * q_bar * ew
    s_bar = 2.0 * r_bar * s * x
    x_bar = r_bar * ss
    a_bar = -r_bar
    t = s_bar * (1.0 - tw * tw)
    w_bar += t * c
    c_bar = t * w
    v_bar = w_bar / u2
    u_bar = np.cos(u) * ex * v_bar - w_bar * w / u2
    x_bar -= 2.0 * x * v * v_bar
    h_bar = u_bar * h / u
    f_bar = s_bar + h_bar * g
    c_bar -= h_bar
    d_bar = 2.0 * (h_bar * f) * d / dd
    e_bar = f_bar / bb
    b_bar = -2.0 * f_bar * f * b / bb
    t = e_bar * (1.0 - e * e)
    d_bar += t
    a_bar += t
    c_bar -= 2.0 * d_bar * d * c
    a_bar += c_bar * b
    b_bar += c_bar * a
    x_bar += c_bar + a_bar * b - b_bar * a
    return x_bar


def tiny_torch(x):
    a = torch.sin(x)
    b = torch.cos(x)
    c = a * b + x
    d = torch.exp(-c * c)
    e = torch.tanh(d + a)
    f = e / (1.0 + b * b)
    g = torch.log(1.0 + d * d)
    h = f * g - c
    u = torch.sqrt(1.0 + h * h)
    v = torch.sin(u) * torch.exp(-x * x)
    w = v / (u + 2.0)
    s = torch.tanh(w * c) + f
    r = s * s * x - a
    q = torch.tanh(r) + torch.exp(0.1 * w)
    return torch.sum(q * q + r)


def tiny_args():
    rng = np.random.default_rng(6)
    return (rng.uniform(-1.0, 1.0, 10),)


# -- 7. scatter-add in a Python loop, 1,000 trips ----------------------------------------
# The hand-written gradients of the loop workloads (7 to 10) keep the primal's loop and
# run its adjoint loop backwards, as a person differentiating that loop writes them
# (and as benchmarks/loop_writes.py does): the ratio is then the cost of srcgrad's
# loop code, not of a different algorithm (a gather y_bar[idx] would vectorise the
# scatter's adjoint loop; no AD tool rewrites a loop into one).


def scatter(x, w, idx):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[idx[i]] += w * x[i]
    return np.sum(y * y)


def scatter_grad(x, w, idx):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[idx[i]] += w * x[i]
    # an increment passes y's adjoint through unchanged: y_bar is 2 y on every trip
    y_bar = 2.0 * y
    x_bar = np.empty_like(x)
    w_bar = 0.0
    for i in reversed(range(x.shape[0])):
        g = y_bar[idx[i]]
        w_bar += g * x[i]
        x_bar[i] = g * w
    return x_bar, w_bar


def scatter_torch(x, w, idx):
    y = torch.zeros_like(x)
    for i in range(x.shape[0]):
        y[idx[i]] += w * x[i]
    return torch.sum(y * y)


def scatter_args():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1000)
    idx = rng.integers(0, 1000, 1000)  # positions repeat: some items get several terms
    return x, 0.5, idx


# -- 8. a while loop with a break, over the items of x ------------------------------------


def breakloop(x, c):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        s = s + np.sin(x[i]) * c
        if s > 400.0:
            break
        i += 1
    return s * s


def breakloop_grad(x, c):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        s = s + np.sin(x[i]) * c
        if s > 400.0:
            break
        i += 1
    trips = min(i + 1, x.shape[0])  # the items the loop read
    s_bar = 2.0 * s  # s is a sum: every term gets the same adjoint
    x_bar = np.zeros_like(x)
    c_bar = 0.0
    for i in reversed(range(trips)):
        xi = x[i]
        c_bar += s_bar * np.sin(xi)
        x_bar[i] = s_bar * c * np.cos(xi)
    return x_bar, c_bar


def breakloop_torch(x, c):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        s = s + torch.sin(x[i]) * c
        if s > 400.0:
            break
        i += 1
    return s * s


def breakloop_args():
    rng = np.random.default_rng(8)
    return rng.uniform(0.0, 1.0, 1000), 1.0  # s passes 400 at item 877 of 1,000


# -- 9. a recursion: x ** n by repeated squaring, on 1,000 elements -----------------------


def power(x, n):
    if n == 0:
        return np.ones_like(x)
    h = power(x, n // 2)
    if n % 2 == 0:
        return h * h
    return x * h * h


def power_loss(x, n):
    return np.sum(power(x, n))


def _power_and_slope(x, n):
    """power(x, n) and its elementwise derivative, carried up the recursion together."""
    if n == 0:
        return np.ones_like(x), np.zeros_like(x)
    h, dh = _power_and_slope(x, n // 2)
    dh *= h
    dh *= 2.0  # d(h h) = 2 h dh
    h *= h
    if n % 2:
        dh *= x
        dh += h  # d(x h h) = h h + 2 x h dh
        h *= x
    return h, dh


def power_loss_grad(x, n):
    return _power_and_slope(x, n)[1]


def power_torch(x, n):
    if n == 0:
        return torch.ones_like(x)
    h = power_torch(x, n // 2)
    if n % 2 == 0:
        return h * h
    return x * h * h


def power_loss_torch(x, n):
    return torch.sum(power_torch(x, n))


def power_args():
    rng = np.random.default_rng(9)
    return rng.uniform(0.999, 1.001, 1000), 1000  # 10 levels of recursion, 4 odd


# -- 10. 1-D heat equation: 100 explicit steps of an in-place slice stencil ---------------


def heat(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_grad(u0, r, steps):
    n = u0.shape[0]
    u = u0.copy()
    laps = np.empty((steps, n - 2))  # every step's stencil, for r's adjoint
    step = np.empty(n - 2)
    for t in range(steps):
        lap = laps[t]
        np.subtract(u[2:], u[1:-1], out=lap)
        lap -= u[1:-1]
        lap += u[:-2]
        np.multiply(lap, r, out=step)
        u[1:-1] += step
    # each step is linear in u: its adjoint adds the transposed stencil of r g[1:-1]
    g = 2.0 * u
    r_bar = 0.0
    q = step
    for t in reversed(range(steps)):
        inner = g[1:-1]
        r_bar += inner @ laps[t]
        np.multiply(inner, r, out=q)
        inner -= q
        inner -= q
        g[2:] += q
        g[:-2] += q
    return g, r_bar


def heat_torch(u0, r, steps):
    u = u0.clone()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return torch.sum(u * u)


def heat_args():
    rng = np.random.default_rng(10)
    return rng.standard_normal(1000), 0.25, 100


# -- 11. a per-row loss in a Python loop: the sum of each row's product ------------------


def rows(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.tanh(np.sum(w * X[i]))
    return s


def rows_grad(w, X):
    # each row's term tanh(w . X[i]) adds X[i] / cosh(w . X[i])**2
    g = np.zeros_like(w)
    for i in range(X.shape[0]):
        g += X[i] / np.cosh(np.sum(w * X[i])) ** 2
    return g


def rows_torch(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + torch.tanh(torch.sum(w * X[i]))
    return s


def rows_args():
    rng = np.random.default_rng(11)
    return 0.2 * rng.standard_normal(50), rng.standard_normal((200, 50))


WORKLOADS = [
    Workload(
        "logreg",
        "logistic regression loss, X 2000x100, gradient w.r.t. w (100)",
        logreg,
        (0,),
        logreg_args,
        logreg_grad,
        logreg_torch,
    ),
    Workload(
        "mlp",
        "2-layer MLP 784-256-10, tanh, softmax cross-entropy, batch 128, "
        "gradient w.r.t. W1, b1, W2, b2",
        mlp,
        (0, 1, 2, 3),
        mlp_args,
        mlp_grad,
        mlp_torch,
    ),
    Workload(
        "rnn",
        "tanh RNN, 50 steps in a Python for loop, batch 16, hidden 64, input 8, "
        "loss sum(h*h) of the final h, gradient w.r.t. Wh, Wx",
        rnn,
        (0, 1),
        rnn_args,
        rnn_grad,
        rnn_torch,
    ),
    Workload(
        "euler",
        "damped oscillator, 2000 explicit Euler steps on Python floats, loss x**2 at the "
        "end, gradient w.r.t. the spring constant k",
        euler,
        (0,),
        euler_args,
        euler_grad,
        euler,
        static_argnums=(4,),
    ),
    Workload(
        "euler2",
        "the damped oscillator of euler with its damping c a parameter too, gradient "
        "w.r.t. (k, c): the hand-written gradient carries both sensitivities forward",
        euler2,
        (0, 1),
        euler2_args,
        euler2_grad,
        euler2,
        static_argnums=(5,),
    ),
    Workload(
        "rosenbrock",
        "vectorised Rosenbrock function, 10**6 elements, gradient w.r.t. x",
        rosenbrock,
        (0,),
        rosenbrock_args,
        rosenbrock_grad,
        rosenbrock_torch,
    ),
    Workload(
        "tiny",
        "40 elementwise operations (sin, cos, exp, log, tanh, sqrt, + - * /) on "
        "10 elements, gradient w.r.t. x",
        tiny,
        (0,),
        tiny_args,
        tiny_grad,
        tiny_torch,
    ),
    Workload(
        "scatter",
        "y[idx[i]] += w * x[i] in a Python loop of 1,000 trips (positions repeat), loss "
        "sum(y*y), gradient w.r.t. x and the scalar w",
        scatter,
        (0, 1),
        scatter_args,
        scatter_grad,
        scatter_torch,
    ),
    Workload(
        "breakloop",
        "while loop over the items of x (1,000), s = s + sin(x[i]) * c until s passes a "
        "threshold (break at item 877), loss s**2, gradient w.r.t. x and c",
        breakloop,
        (0, 1),
        breakloop_args,
        breakloop_grad,
        breakloop_torch,
    ),
    Workload(
        "power",
        "recursive x**1000 by repeated squaring (10 levels) on 1,000 elements, loss its "
        "sum, gradient w.r.t. x: the hand-written one carries the derivative up",
        power_loss,
        (0,),
        power_args,
        power_loss_grad,
        power_loss_torch,
        static_argnums=(1,),
    ),
    Workload(
        "heat",
        "1-D heat equation, 100 explicit steps of u[1:-1] = u[1:-1] + r * (stencil) on "
        "1,000 points, loss sum(u*u), gradient w.r.t. the initial u and r",
        heat,
        (0, 1),
        heat_args,
        heat_grad,
        heat_torch,
        static_argnums=(2,),
    ),
    Workload(
        "rows",
        "a loss summed row by row in a Python loop of 200 trips, tanh(sum(w * X[i])), "
        "X 200x50, gradient w.r.t. w",
        rows,
        (0,),
        rows_args,
        rows_grad,
        rows_torch,
    ),
]
