"""``grad`` and ``value_and_grad`` in forward mode: up to ``FORWARD_LANES`` input
elements, one vector Jacobian-vector product that runs the function once and carries a
tangent per element; above it (and for dask arrays), one Jacobian-vector product per
input element. And ``_Passes``, the check every derivative that runs the user's function
more than once (``jacobian``, ``hessian`` too) makes that each pass computes what the
first did."""

from __future__ import annotations

import ast
import math
import random
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import pytree
from .arguments import call_with
from .backends import dask_numpy, is_cupy, is_dask
from .backends import module_of as _module_of
from .cache import _CACHE
from .results import _COMPLEX_GRADIENT, _copied, _fresh, _like, _unflatten, _zero_tangent

if TYPE_CHECKING:
    from .compiler import driver
    from .derivative import Derivative


#: ``grad(..., mode="forward")`` carries the tangents of up to this many input elements
#: in one pass (a vector JVP)
FORWARD_LANES = 8

#: ``mode="auto"`` is forward mode for up to this many numbers (Python or numpy scalars,
#: 0-d arrays), reverse mode for more and for any array of rank 1 or more. Measured
#: (benchmarks/workloads.py, forward time / reverse time): the Euler loop on Python
#: floats 0.89 with respect to k, 0.97 to (k, c), 1.55 to four numbers; 40 elementwise
#: operations on arrays 1.7 for one element, 2.4 for two, 7.5 for eight.
AUTO_FORWARD = 2


def wrt_elements(values: Sequence[Any]) -> int:
    """How many elements the ``wrt`` arguments ``values`` have in all (their leaves')."""
    return sum(math.prod(np.shape(leaf)) for v in values for leaf in pytree.leaves(v))


#: the types of arguments that are neither pytrees nor dask arrays (exactly these)
_PLAIN = frozenset(
    {float, int, bool, type(None), np.ndarray, np.float64, np.float32, np.float16, np.int64}
)


def auto_forward(derivative: Derivative, args: tuple, kwargs: dict) -> bool:
    """Whether a call of a ``mode="auto"`` derivative runs in forward mode: when its
    wrt arguments are from 1 to ``AUTO_FORWARD`` real numbers in all (leaves of pytrees
    included; no array of rank 1 or more, no dask array); else reverse mode."""
    if not kwargs and len(args) == len(derivative._params):
        values = [args[i] for i in derivative._wrt_index]
    else:
        try:
            bound = derivative._bind(args, kwargs)
        except TypeError:  # (the reverse-mode call says what is wrong)
            return False
        values = [bound[i] for i in derivative._wrt_index]
    if all(type(v) in _PLAIN for v in values):  # (the common case, quickly)
        leaves = values
    else:
        leaves = [leaf for v in values for leaf in pytree.leaves(v)]
        if any(is_dask(leaf) for leaf in leaves):
            return False
    return 0 < len(leaves) <= AUTO_FORWARD and all(
        np.ndim(leaf) == 0 and not np.iscomplexobj(leaf) for leaf in leaves
    )


def _forward_grad(derivative: Derivative, derived: driver.Derived, values: list[Any]) -> Any:
    """A gradient by forward mode: the Jacobian-vector product of ``derived`` along
    each input element's basis tangent, all in one pass of its vector JVP for up to
    ``FORWARD_LANES`` elements, else one pass each, each of which must see the function
    give the same value (see ``_Passes``)."""
    wrt_values = [values[i] for i in derivative._wrt_index]
    if all(type(v) in _PLAIN for v in values):  # (the common case, with no pytree walks)
        counts = tuple(1 if type(v) is not np.ndarray else v.size for v in wrt_values)
        if counts == (1,) or 1 < sum(counts) <= FORWARD_LANES:
            value, grads = _plain_vector_pass(derivative, derived, values, wrt_values, counts)
            return _forward_result(derivative, value, grads, values)
    zeros = [_zero_tangent(v) for v in wrt_values]
    # a call with dask arrays: every derivative stays lazy (a float's and a numpy
    # array's too), stacked at the end; computing each would compute the graph
    lazy = any(is_dask(leaf) for v in values for leaf in pytree.leaves(v))
    count = wrt_elements(wrt_values)
    what = f"{derivative.kind}(..., mode='forward')"
    vector = None
    if 1 < count <= FORWARD_LANES and not lazy:
        counts = tuple(wrt_elements([v]) for v in wrt_values)
        vector = derived.with_lanes(counts)
        derivative._last = vector  # (what .source shows)
        seeds = []  # each direction's tangent of its parameter, in the order of lanes
    passes = _Passes(derivative, what, values, count if vector is None else 1, "element")
    value = None
    grads = []
    for k, tree in enumerate(wrt_values):
        flat = pytree.leaves(tree)
        leaf_grads = []
        for j, v in enumerate(flat):
            dtype = v.dtype if getattr(v, "dtype", None) is not None else np.float64
            grad = np.zeros(np.shape(v), dtype=dtype) if not lazy else []
            for index in np.ndindex(np.shape(v)):
                basis = _basis(v, index)
                seed = _unflatten(tree, [basis if i == j else None for i in range(len(flat))])
                if vector is not None:
                    seeds.append(seed)
                    continue
                tangents = list(zeros)
                tangents[k] = seed
                value, dout = _one_pass(derivative, derived, values, tangents, passes)
                if lazy:
                    grad.append(dout)
                else:
                    if np.iscomplexobj(dout):
                        raise TypeError(_COMPLEX_GRADIENT)
                    grad[index] = float(dout)  # a host number, whatever the backend
            if lazy:
                grad = _stacked(grad, v)
            leaf_grads.append(grad if vector is not None else _like(grad, v))
        grads.append(_unflatten(tree, leaf_grads) if vector is None else leaf_grads)
    if vector is not None:
        value, grads = _one_vector_pass(derivative, vector, values, seeds, wrt_values, grads)
    if not wrt_values or value is None:  # (no elements: no pass ran)
        value = call_with(derivative.__wrapped__, _copied(values))
        if derivative._tangent_output:
            value = value[1]
    return _forward_result(derivative, value, grads, values)


def _forward_result(derivative: Derivative, value: Any, grads: list[Any], values: list[Any]) -> Any:
    """What a forward-mode ``grad`` or ``value_and_grad`` returns, from the function's
    ``value`` and the gradient of each wrt argument."""
    result = grads[0] if not derivative._wrt_tuple else tuple(grads)
    if derivative.has_aux and derivative.kind == "grad":  # value is (value, aux)
        return result, value[1]
    return (_fresh(value, values), result) if derivative.kind == "value_and_grad" else result


def _plain_vector_pass(
    derivative: Derivative,
    derived: driver.Derived,
    values: list[Any],
    wrt_values: list[Any],
    counts: tuple[int, ...],
) -> tuple[Any, list[Any]]:
    """The one pass of a forward-mode gradient by the vector JVP of ``derived`` (by
    ``derived`` itself for one element) for arguments that are numbers and numpy
    arrays (``counts``: each wrt argument's elements): the function's value and each
    wrt argument's gradient, what ``_one_vector_pass`` (or ``_one_pass``) gives."""
    vector = derived if counts == (1,) else derived.with_lanes(counts)
    derivative._last = vector  # (what .source shows)
    seeds = []
    for v in wrt_values:
        if type(v) is np.ndarray:
            seeds += [_basis(v, index) for index in np.ndindex(v.shape)]
        else:
            seeds.append(type(v)(1.0))
    value, *douts = vector.function(*values, *seeds)
    for dout in douts:
        if type(dout) is float:
            continue
        if pytree.is_node(dout) or np.ndim(dout) != 0:
            raise ValueError(_not_scalar(derivative.__name__, dout, derivative.has_aux))
        if np.iscomplexobj(dout):
            raise TypeError(_COMPLEX_GRADIENT)
    grads = []
    start = 0
    for v, count in zip(wrt_values, counts):
        if type(v) is float:
            grads.append(float(douts[start]))
        else:
            dtype = v.dtype if getattr(v, "dtype", None) is not None else np.float64
            grad = np.array([float(d) for d in douts[start : start + count]], dtype=dtype)
            grads.append(_like(grad.reshape(np.shape(v)), v))
        start += count
    return value, grads


def _one_vector_pass(
    derivative: Derivative,
    vector: driver.Derived,
    values: list[Any],
    seeds: list[Any],
    wrt_values: list[Any],
    grads: list[list[Any]],
) -> tuple[Any, list[Any]]:
    """The one pass of a forward-mode gradient by the vector JVP ``vector``: the
    function's value and its derivatives along ``seeds``, written into ``grads`` (for
    each wrt argument, each leaf's gradient, of its shape and dtype) in the order of the
    seeds (each argument's leaves, each leaf's elements in C order); returns the value
    and each argument's gradient shaped like it."""
    value, *douts = vector.function(*map(pytree.plain, values), *map(pytree.plain, seeds))
    douts = iter(douts)
    shaped = []
    for tree, leaf_grads in zip(wrt_values, grads):
        leaves = pytree.leaves(tree)
        for grad, v in zip(leaf_grads, leaves):
            for index in np.ndindex(np.shape(v)):
                dout = next(douts)
                if pytree.is_node(dout) or np.ndim(dout) != 0:
                    raise ValueError(_not_scalar(derivative.__name__, dout, derivative.has_aux))
                if np.iscomplexobj(dout):
                    raise TypeError(_COMPLEX_GRADIENT)
                grad[index] = float(dout)  # a host number, whatever the backend
        shaped.append(_unflatten(tree, [_like(g, v) for g, v in zip(leaf_grads, leaves)]))
    return value, shaped


def _basis(v: Any, index: tuple[int, ...]) -> Any:
    """The tangent of the leaf ``v`` that is 1 at ``index`` and 0 elsewhere."""
    if isinstance(v, np.ndarray) or is_dask(v):
        basis = _module_of(v).zeros_like(v)
        basis[index] = 1
    else:
        basis = type(v)(1.0)
    return basis


def _one_pass(
    derivative: Derivative,
    derived: driver.Derived,
    values: list[Any],
    tangents: list[Any],
    passes: _Passes,
) -> tuple[Any, Any]:
    """One pass of a forward-mode gradient: the function's value and its derivative in
    the direction of ``tangents`` (a scalar: a ``ValueError`` for anything else)."""
    # (of a jvp, the code made keeps its tangent output alone: Derivative._derive)
    value, dout = derived.function(*map(pytree.plain, values), *map(pytree.plain, tangents))
    passes.check(value)
    if pytree.is_node(dout) or np.ndim(dout) != 0:
        raise ValueError(_not_scalar(derivative.__name__, dout, derivative.has_aux))
    return value, dout


def _stacked(grad: list[Any], v: Any) -> Any:
    """The lazy derivatives of the elements of ``v``, stacked into a dask array of its shape."""
    xp = dask_numpy()
    return (
        xp.stack([xp.asarray(d) for d in grad]).reshape(np.shape(v)) if grad else xp.zeros_like(v)
    )


def _not_scalar(name: str, out: Any, has_aux: bool) -> str:
    """Why ``grad`` of ``name`` cannot use its output ``out``, and what to use instead."""
    if isinstance(out, (tuple, list)) and not has_aux:
        return (
            f"grad requires {name!r} to return a scalar, but it returned a {type(out).__name__} "
            f"of {len(out)}; to return auxiliary values with it, `return value, aux` and pass "
            "has_aux=True (grad then returns (gradient, aux)); for a gradient of each "
            "element, use srcgrad.vjp or srcgrad.jacobian"
        )
    what = (
        f"a {type(out).__name__}" if pytree.is_node(out) else f"an array of shape {np.shape(out)}"
    )
    return (
        f"grad requires {name!r} to return a scalar, but it returned {what}; use srcgrad.vjp "
        "or srcgrad.jacobian (srcgrad.hvp for the Hessian of a function of a pytree)"
    )


#: the objects that hand out random numbers: a function that draws from one gives other
#: values each time it runs
_RANDOM_SOURCES = (
    np.random.Generator,
    np.random.RandomState,
    np.random.BitGenerator,
    random.Random,
)


class _Passes:
    """The passes of a derivative that runs the user's function more than once
    (``grad(..., mode="forward")``, ``jacobian``, ``hessian``): every pass must compute
    what the first did, or the derivative mixes the derivatives of different functions.

    A function given (or reaching) a random number generator is refused before the
    second pass; a value that differs from the first pass's is an error after it.
    """

    def __init__(
        self, owner: Derivative, what: str, values: Sequence[Any], count: int, per: str
    ) -> None:
        self.owner = owner
        self.what = what  # grad(..., mode='forward'), jacobian(...)
        self.values = values
        self.count = count  # how many passes the derivative runs
        self.per = per  # what each pass is for: "element", "output element"
        self.first: Any = None
        self.seen = 0

    def check(self, value: Any = None) -> None:
        """Note one pass and the function's ``value`` in it (None where unknown)."""
        self.seen += 1
        if self.count <= 1:
            return
        if self.seen == 1:
            source = _random_source(self.owner, self.values)
            if source is not None:
                raise TypeError(
                    f"{self.what} of {_user_name(self.owner)} runs it once per {self.per} "
                    f"({self.count} passes here), and {source}: each pass would see "
                    "different random numbers and the derivative would mix them. Use a "
                    "derivative that runs the function once (srcgrad.grad in reverse mode, "
                    "srcgrad.vjp, srcgrad.jvp, srcgrad.hvp), or draw the numbers outside the "
                    "function and pass them in as an array."
                )
            self.first = value
        elif value is not None and not _same_value(self.first, value):
            raise ValueError(
                f"{self.what} of {_user_name(self.owner)} runs it once per {self.per} "
                f"({self.count} passes here), and it computed a different value in pass "
                f"{self.seen} than in pass 1 ({_brief(value)} against {_brief(self.first)}): "
                "the function must give the same value each time it runs on the same "
                "arguments (does it draw random numbers, or read state that changes?). Use a "
                "derivative that runs it once (srcgrad.grad in reverse mode, srcgrad.vjp, "
                "srcgrad.jvp, srcgrad.hvp), or pass such numbers in as arguments."
            )


def _user_name(derivative: Derivative) -> str:
    """The name of the user's function under ``derivative`` (and its inner ones)."""
    while derivative._inner is not None:
        derivative = derivative._inner
    return repr(derivative.__wrapped__.__qualname__)


def _random_source(derivative: Derivative, values: Sequence[Any]) -> str | None:
    """How the user's function under ``derivative`` draws random numbers, where srcgrad
    can see it: an argument it reads that is a random number generator, or a global or
    closure name in it or in a function it calls that refers to one or to one of its
    methods (``np.random.normal``, ``rng.normal``); None where it sees none."""
    inner = derivative
    while inner._inner is not None:
        inner = inner._inner
    entry = _CACHE.get(inner.__wrapped__)
    parsed = [n.parsed for n in (entry.norm, entry.norm_aux) if n is not None] if entry else []
    read = {n.id for p in parsed[:1] for n in ast.walk(p.tree) if isinstance(n, ast.Name)}
    for param, value in zip(derivative._params, values):
        for path, leaf in pytree.paths(value, param):
            if isinstance(leaf, _RANDOM_SOURCES) and (param in read or not parsed):
                return f"its argument {path!r} is a {type(leaf).__name__}"
    parsed += list(inner._last.callees) if inner._last is not None else []
    for p in parsed:
        for node in ast.walk(p.tree):
            if isinstance(node, (ast.Name, ast.Attribute)):
                obj = _static_object(node, p.env)
                if isinstance(obj, _RANDOM_SOURCES) or isinstance(
                    getattr(obj, "__self__", None), _RANDOM_SOURCES
                ):
                    where = f"{p.locator.filename}:{getattr(node, 'lineno', '?')}"
                    shared = type(getattr(obj, "__self__", obj)).__name__
                    return f"it reads {ast.unparse(node)} ({where}), which draws from a {shared}"
    return None


def _static_object(node: ast.expr, env: dict[str, Any]) -> Any:
    """The object a dotted name rooted at a global or closure name refers to, following
    attributes of modules only (reading another object's could run its code); None where
    it is not such a name."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in env:
        return None
    obj = env[node.id]
    for attr in reversed(attrs):
        if not isinstance(obj, types.ModuleType):
            return None
        obj = getattr(obj, attr, None)
    return obj


def _same_value(a: Any, b: Any) -> bool:
    """Whether two passes' values agree (to rounding: a sum may add in another order)."""
    if pytree.is_node(a) or pytree.is_node(b):
        leaves_a, leaves_b = pytree.leaves(a), pytree.leaves(b)
        return len(leaves_a) == len(leaves_b) and all(map(_same_value, leaves_a, leaves_b))
    if is_dask(a) or is_dask(b) or a is None or b is None:
        return True  # (lazy: comparing would compute the graph)
    xp = np if not is_cupy(a) else _module_of(a)
    try:
        if np.shape(a) != np.shape(b):
            return False
        dtype = np.result_type(getattr(a, "dtype", type(a)), getattr(b, "dtype", type(b)))
        if dtype.kind not in "fc":  # numbers exactly; other objects: no claim
            return dtype.kind not in "biu" or bool(xp.all(xp.asarray(a) == xp.asarray(b)))
        tol = float(np.finfo(dtype).eps) ** 0.5
        a, b = xp.asarray(a), xp.asarray(b)
        scale = float(xp.max(xp.abs(xp.nan_to_num(a)))) if a.size else 0.0
        return bool(xp.allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True))
    except (TypeError, ValueError):  # (an auxiliary value numpy cannot compare: no claim)
        return True


def _brief(value: Any) -> str:
    """A short text for a pass's value in an error message."""
    if isinstance(value, (float, int, np.generic)) or np.ndim(value) == 0:
        try:
            return f"{float(value):.6g}"
        except (TypeError, ValueError):
            return repr(value)[:40]
    return f"an array of shape {np.shape(value)}"
