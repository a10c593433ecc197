"""Rules for ``scipy.linalg``, registered only when SciPy is installed.

``inv``, ``det``, ``solve`` and ``cholesky`` reuse the rules of their ``numpy.linalg``
twins (same derivatives, and the same conventions, see ``srcgrad/rules/linalg.py``):
``cholesky`` reads one triangle but its derivative treats its argument as symmetric (a
tangent counts as its symmetric part, the adjoint is symmetric); SciPy returns the
upper factor ``u = l.T`` unless ``lower=True``, and the rule transposes around NumPy's.
``solve`` is differentiated for ``assume_a=None`` (a general matrix) and
``transposed=False``; ``overwrite_a``/``overwrite_b`` must stay ``False`` (SciPy would
write into the caller's arrays, which the derivative reads).

Read a row as: the function, then the derivative of each differentiable argument (``g``
the incoming tangent or adjoint, ``ans`` the result, ``op`` the transpose where
``trans`` asks for one, ``tri`` the triangle ``solve_triangular`` reads)::

    solve_triangular(a, b, trans, lower, unit_diagonal)
        forward  b: the same solve of g;  a: -solve_triangular(a, op(tri(g)) @ ans, ...)
        reverse  b: solve_triangular(a, g, the other trans, ...);  a: -tri(gb ans') (op'd)
    expm(a)
        forward  expm([[a, g], [0, a]]) top right (the Frechet derivative)
        reverse  expm([[a', g], [0, a']]) top right

SciPy broadcasts one matrix against a stack of right-hand sides (``a`` of shape ``(n,
n)``, ``b`` of shape ``(k, n, m)``); the matrix's adjoint is then summed over the stack.
``solve_triangular`` reads one triangle of ``a`` (without its diagonal where
``unit_diagonal``): the derivative in the entries it does not read is 0, exactly. The
derivative templates call ``solve_triangular`` and ``expm`` as the user's code spells
them (so the generated module has them imported, and second derivatives use these same
rules).

``cho_factor(a, lower)`` returns a pair ``(c, lower)``: the factor in one triangle of
``c`` (``l`` with ``a = l l'``, or ``u`` with ``a = u' u``) and ``a``'s own entries in the
other, where LAPACK leaves them. Its tangent is the factor's (``a`` taken as symmetric,
as for ``cholesky``) plus ``a``'s tangent in the other triangle; the flag's is 0. The pair
goes to ``cho_solve((c, lower), b)`` as it came (``cho_solve(cho_factor(a), b)``) or
rebuilt (``c, low = cho_factor(a)``; ``cho_solve((c, low), b)``), and ``cho_solve`` is
differentiated in ``b`` and in the factor's triangle of ``c`` (the other is not read)::

    cho_solve((c, lower), b)
        forward  b: the same solve of g;  c: -cho_solve((c, lower), da @ ans), with
                 da = dl l' + l dl' (du' u + u' du), dl the factor's triangle of g
        reverse  b: cho_solve((c, lower), g) = gb;  c: tril(s l) (triu(u s)),
                 s = -(gb ans' + ans gb')

``lu_factor(a)`` returns ``(lu, piv)``, ``a = p l u`` with ``l`` unit lower triangular
(its strict lower triangle in ``lu``) and ``u`` upper triangular; ``p``, which ``piv``
encodes, is never built: ``l⁻¹ p' = u a⁻¹`` and ``a⁻¹ = u⁻¹ l⁻¹ p'``. With ``f = u a⁻¹
da u⁻¹``, the tangent of ``lu`` is ``l tril(f, -1) + triu(f) u``; the pivots' is 0.
``lu_solve((lu, piv), b, trans)`` is differentiated in ``b`` and ``lu`` (formulas in the
helpers ``lu_solve_jvp``, ``lu_solve_vjp``, ``lu_solve_t_rhs``, ``lu_solve_t_vjp``),
``trans`` literal or passed in.
"""

from __future__ import annotations

import dataclasses
from collections import ChainMap
from typing import Any

import numpy as np

from . import RULES, Context, Rule, instantiate, linear, register
from .runtime_rules import _nondiff, _rule, helper

try:
    import scipy.linalg as _linalg
except ImportError:  # srcgrad does not require SciPy: no rules then
    _linalg = None


def _calling(name: str, template):
    """``template`` (a function of the Context giving a string) with ``name`` standing for
    the function called, as the user's code spells it."""

    def instantiated(ctx: Context):
        symbols = ChainMap({name: ctx.node.func}, ctx.symbols)
        return instantiate(template(ctx), dataclasses.replace(ctx, symbols=symbols))

    return instantiated


# -- solve_triangular ----------------------------------------------------------------------
def _options(ctx: Context, trans: str | None = None) -> str:
    """The keyword arguments of a ``solve_triangular`` like this one, ``trans`` replaced."""
    parts = []
    if trans is not None:
        parts.append(f"trans={trans}")
    elif "trans" in ctx.supplied:
        parts.append("trans=trans")
    parts += [f"{p}={p}" for p in ("lower", "unit_diagonal") if p in ctx.supplied]
    return "".join(f", {part}" for part in parts)


def _other_trans(ctx: Context) -> str:
    if ctx.is_static("trans"):
        return "0" if ctx.static("trans") in (1, 2, "T", "C") else "1"
    return "flip_trans(trans)"


def _tri_jvp_a(ctx: Context) -> str:
    applied = "tri_apply(g, ans, trans, lower, unit_diagonal)"
    return f"-solve_triangular(a, {applied}{_options(ctx)})"


def _tri_vjp_b(ctx: Context) -> str:
    return f"solve_triangular(a, g{_options(ctx, _other_trans(ctx))})"


def _tri_vjp_a(ctx: Context) -> str:
    # (summed over the stack of right-hand sides one matrix solved)
    adjoint = f"tri_solve_vjp_a({_tri_vjp_b(ctx)}, ans, trans, lower, unit_diagonal)"
    return adjoint if ctx.rank("b") in (1, 2) else f"unbroadcast({adjoint}, a)"


# -- lu_solve: the derivative's form depends on trans (chosen at run time where it is passed in)
def _by_trans(ctx: Context, plain: str, transposed: str) -> str:
    if ctx.is_static("trans"):
        return transposed if ctx.static("trans") in (1, 2, "T", "C") else plain
    return f"({transposed} if transposed(trans) else {plain})"


def _lu_jvp(ctx: Context) -> str:
    plain = "lu_solve_jvp(g[0], lu_and_piv[0], ans)"
    transposed = "-lu_solve(lu_and_piv, lu_solve_t_rhs(g[0], lu_and_piv[0], b), trans=trans)"
    return _by_trans(ctx, plain, transposed)


def _lu_vjp_b(ctx: Context) -> str:
    return f"lu_solve(lu_and_piv, g, trans={_other_trans(ctx)})"


def _lu_vjp(ctx: Context) -> str:
    plain = "pair_adjoint(lu_solve_vjp(g, lu_and_piv[0], ans))"
    transposed = "pair_adjoint(lu_solve_t_vjp(lu_solve(lu_and_piv, g), lu_and_piv[0], b))"
    return _by_trans(ctx, plain, transposed)


def _rank_of(param: str):
    return lambda ctx: ctx.rank(param)


def _register_solve_triangular(la: Any) -> None:
    register(
        la.solve_triangular,
        Rule(
            name="scipy.linalg.solve_triangular",
            params=(
                "a",
                "b",
                "trans",
                "lower",
                "unit_diagonal",
                "overwrite_b",
                "check_finite",
            ),
            defaults={
                "trans": 0,
                "lower": False,
                "unit_diagonal": False,
                "overwrite_b": False,
                "check_finite": True,
            },
            fixed={"overwrite_b": False},
            jvp={"a": _calling("solve_triangular", _tri_jvp_a), "b": linear},
            vjp={
                "a": _calling("solve_triangular", _tri_vjp_a),
                "b": _calling("solve_triangular", _tri_vjp_b),
            },
            rank=_rank_of("b"),
        ),
    )


def _register_expm(la: Any) -> None:
    # expm: the Frechet derivative from the block-matrix identity
    register(
        la.expm,
        Rule(
            name="scipy.linalg.expm",
            params=("A",),
            jvp={"A": _calling("expm", lambda c: "frechet_corner(expm(frechet_block(A, g)))")},
            vjp={
                "A": _calling(
                    "expm",
                    lambda c: "frechet_corner(expm(frechet_block(np.swapaxes(A, -1, -2), g)))",
                )
            },
            rank=_rank_of("A"),
        ),
    )


def _register_twins(la: Any) -> None:
    # numpy.linalg's twins: the same templates, SciPy's parameters
    for func, twin, params, defaults, fixed in (
        (
            la.inv,
            np.linalg.inv,
            ("a", "overwrite_a", "check_finite", "assume_a", "lower"),
            {"overwrite_a": False, "check_finite": True, "assume_a": None, "lower": False},
            {"overwrite_a": False, "assume_a": None},
        ),
        (
            la.det,
            np.linalg.det,
            ("a", "overwrite_a", "check_finite"),
            {"overwrite_a": False, "check_finite": True},
            {"overwrite_a": False},
        ),
        (
            la.solve,
            np.linalg.solve,
            (
                "a",
                "b",
                "lower",
                "overwrite_a",
                "overwrite_b",
                "check_finite",
                "assume_a",
                "transposed",
            ),
            {
                "lower": False,
                "overwrite_a": False,
                "overwrite_b": False,
                "check_finite": True,
                "assume_a": None,
                "transposed": False,
            },
            {"overwrite_a": False, "overwrite_b": False, "assume_a": None, "transposed": False},
        ),
    ):
        rule = RULES[twin]
        register(
            func,
            dataclasses.replace(
                rule,
                name=f"scipy.linalg.{func.__name__}",
                params=params,
                defaults=defaults,
                fixed=fixed,
                jvp=dict(rule.jvp),
                vjp=dict(rule.vjp),
            ),
        )


def _register_cholesky_pair(la: Any) -> None:
    # cho_factor and cho_solve, used as a pair: cho_solve((c, lower), b)
    register(
        la.cho_factor,
        Rule(
            name="scipy.linalg.cho_factor",
            params=("a", "lower", "overwrite_a", "check_finite"),
            defaults={"lower": False, "overwrite_a": False, "check_finite": True},
            fixed={"overwrite_a": False},
            jvp={"a": "(cho_factor_jvp(g, ans[0], lower), np.zeros(()))"},
            vjp={"a": "cho_factor_vjp(g[0], ans[0], lower)"},
            rank=lambda c: None,
            tuple_result=True,
        ),
    )
    solve = "cho_solve(c_and_lower, {})"
    register(
        la.cho_solve,
        Rule(
            name="scipy.linalg.cho_solve",
            params=("c_and_lower", "b", "overwrite_b", "check_finite"),
            defaults={"overwrite_b": False, "check_finite": True},
            fixed={"overwrite_b": False},
            jvp={
                "c_and_lower": _calling(
                    "cho_solve",
                    lambda c: (
                        "-" + solve.format("cho_apply(g[0], c_and_lower[0], c_and_lower[1], ans)")
                    ),
                ),
                "b": linear,
            },
            vjp={
                "c_and_lower": _calling(
                    "cho_solve",
                    lambda c: (
                        "cho_solve_vjp("
                        + solve.format("g")
                        + ", c_and_lower[0], c_and_lower[1], ans)"
                    ),
                ),
                "b": _calling("cho_solve", lambda c: solve.format("g")),
            },
            rank=_rank_of("b"),
        ),
    )


def _register_lu_pair(la: Any) -> None:
    # lu_factor and lu_solve, used as a pair: lu_solve((lu, piv), b, trans)
    register(
        la.lu_factor,
        Rule(
            name="scipy.linalg.lu_factor",
            params=("a", "overwrite_a", "check_finite"),
            defaults={"overwrite_a": False, "check_finite": True},
            fixed={"overwrite_a": False},
            jvp={"a": "(lu_factor_jvp(g, a, ans[0]), np.zeros(()))"},
            vjp={"a": "lu_factor_vjp(g[0], a, ans[0])"},
            rank=lambda c: None,
            tuple_result=True,
        ),
    )
    register(
        la.lu_solve,
        Rule(
            name="scipy.linalg.lu_solve",
            params=("lu_and_piv", "b", "trans", "overwrite_b", "check_finite"),
            defaults={"trans": 0, "overwrite_b": False, "check_finite": True},
            fixed={"overwrite_b": False},
            jvp={"lu_and_piv": _calling("lu_solve", _lu_jvp), "b": linear},
            vjp={
                "lu_and_piv": _calling("lu_solve", _lu_vjp),
                "b": _calling("lu_solve", _lu_vjp_b),
            },
            rank=_rank_of("b"),
        ),
    )
    register(
        la.cholesky,
        Rule(
            name="scipy.linalg.cholesky",
            params=("a", "lower", "overwrite_a", "check_finite"),
            defaults={"lower": False, "overwrite_a": False, "check_finite": True},
            fixed={"overwrite_a": False},
            jvp={"a": _by_lower("cholesky_jvp(g, ans)", "mT(cholesky_jvp(g, mT(ans)))")},
            vjp={"a": _by_lower("cholesky_vjp(g, ans)", "cholesky_vjp(mT(g), mT(ans))")},
            rank=_rank_of("a"),
        ),
    )


def _by_lower(lower: str, upper: str):
    """The template for ``lower=True``, for ``lower=False``, or one choosing at run time."""

    def template(ctx: Context) -> str:
        if ctx.is_static("lower"):
            return lower if ctx.static("lower") else upper
        return f"({lower} if lower else {upper})"

    return template


# the helpers the templates call, differentiated again
helper("tri_part", ("d", "lower", "unit_diagonal"), ("d",))
helper("tri_apply", ("d", "x", "trans", "lower", "unit_diagonal"), ("d", "x"))
helper("tri_solve_vjp_a", ("d", "x", "trans", "lower", "unit_diagonal"), ("d", "x"))
# (linear in a and e together, not in each alone: [[a, e], [0, a]] is a sum of the two parts)
_rule(
    "frechet_block",
    params=("a", "e"),
    jvp={"a": "frechet_block(g, np.zeros_like(e))", "e": "frechet_block(np.zeros_like(a), g)"},
)
helper("frechet_corner", ("d",), ("d",))
helper("cho_apply", ("d", "c", "lower", "x"), ("d", "c", "x"))
helper(
    "cho_solve_vjp", ("d", "c", "lower", "x"), ("d", "c", "x"), tuple_result=True, combine="add_seq"
)
helper("pair_adjoint", ("d",), ("d",), tuple_result=True, combine="add_seq")
_nondiff("flip_trans", ("trans",))
_nondiff("transposed", ("trans",))

if _linalg is not None:
    _register_solve_triangular(_linalg)
    _register_expm(_linalg)
    _register_twins(_linalg)
    _register_cholesky_pair(_linalg)
    _register_lu_pair(_linalg)
