"""Part of normalize: a frozen ``scipy.stats`` distribution made in the function and
only asked for values, written as the calls of the distribution it stands for.

In:  the statements of a user function (plain Python AST), its free names resolved, its
local names and parameters, and the namer.
Out: the same statements where a name ``d`` bound once to ``DIST(args...)`` (``DIST`` a
distribution of ``scipy.stats`` named by a global: ``st.norm``, ``gamma``) and read only
as ``d.method(x)`` (``logpdf``, ``pdf``, ``cdf``, ``logcdf``, ``sf``, ``logsf``, ``ppf``,
``isf``; ``pmf`` and ``logpmf`` for a discrete one; ``logpdf`` and ``pdf`` of
``multivariate_normal(mean, cov, allow_singular)``) has its construction replaced by
names for the arguments, and each call by the one SciPy's frozen object makes,
``DIST.method(x, *args, **kwds)``; ``DIST(args...).method(x)`` likewise, in place::

    d = st.norm(loc=mu, scale=2.0)      ==>    d_loc = mu
    y = d.logpdf(x) + d.cdf(x)                 y = st.norm.logpdf(x, loc=d_loc, scale=2.0)
                                                   + st.norm.cdf(x, loc=d_loc, scale=2.0)
    z = t(df).pdf(x)                           z = t.pdf(x, df)

The arguments are evaluated once, where the user made the distribution (a name bound
to each, constants written in place), as SciPy's frozen object holds them; the rules of
``srcgrad/rules/scipy_stats.py`` then differentiate each call in ``x`` and in the
parameters. (In place, ``x`` is evaluated before the arguments: only where one of the
two calls nothing but numpy's ufuncs.) Anything else is left as it is: a distribution
bound twice, passed in, returned, stored, passed to a function, read as ``d.mean()`` or
an attribute, used in a nested function; where a derivative reaches one, the analysis
refuses it with what to write instead (``scipy_stats.frozen_hint``).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from ..astwalk import copy_tree
from ..transform.naming import Namer
from .expression_helpers import _static_value, is_static

#: the methods of a frozen distribution that call the distribution's own with ``x`` first
_METHODS = {"cdf": "x", "logcdf": "x", "sf": "x", "logsf": "x", "ppf": "q", "isf": "q"}
_CONTINUOUS = {"pdf": "x", "logpdf": "x"}
_DISCRETE = {"pmf": "k", "logpmf": "k"}


def lower_frozen(
    body: list[ast.stmt], env: dict[str, Any], local: set[str], params: set[str], namer: Namer
) -> list[ast.stmt]:
    """``body`` with each frozen distribution that only gives values written as calls of
    its distribution (copied first where there is one: the user's statements are left
    as they are)."""
    made = {
        name: methods
        for stmt in _walk_statements(body)
        if (found := _construction(stmt, env, local)) is not None
        for name, methods in [found]
    }
    frozen = {name: methods for name, methods in made.items() if name not in params}
    frozen = {n: m for n, m in frozen.items() if _only_asked_for_values(body, n, m)}
    inline = any(_inline(n, env, local) is not None for s in body for n in ast.walk(s))
    if not frozen and not inline:
        return body
    return _Lowering(frozen, env, local, namer).run(copy_tree(body))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _outer_nodes(body: list[ast.stmt]):
    """Every node of ``body`` outside nested functions, lambdas and classes."""
    todo: list[ast.AST] = list(reversed(body))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _walk_statements(body: list[ast.stmt]):
    """The statements of ``body`` (in nested blocks too) outside nested functions."""
    return (node for node in _outer_nodes(body) if isinstance(node, ast.stmt))


def _distribution_methods(value: Any) -> dict[str, str] | None:
    """The methods lowered for a distribution of scipy.stats (not a frozen one): of a
    univariate one, and ``logpdf`` and ``pdf`` of ``multivariate_normal``; with the name of
    their argument. None for any other value."""
    if _is_multivariate_normal(value):
        return dict(_CONTINUOUS)
    module = sys.modules.get("scipy.stats._distn_infrastructure")
    if module is None or not isinstance(value, module.rv_generic):
        return None
    if isinstance(value, module.rv_continuous):
        return {**_METHODS, **_CONTINUOUS}
    return {**_METHODS, **_DISCRETE} if isinstance(value, module.rv_discrete) else None


def _is_multivariate_normal(value: Any) -> bool:
    module = sys.modules.get("scipy.stats._multivariate")
    return module is not None and isinstance(value, module.multivariate_normal_gen)


#: the parameters of ``multivariate_normal(...)``, and those its ``logpdf`` and ``pdf`` read
_MVN = ("mean", "cov", "allow_singular", "seed", "maxpts", "abseps", "releps")
_MVN_READ = ("mean", "cov", "allow_singular")


def _arguments(call: ast.Call, dist: Any) -> tuple[list, list[ast.keyword]] | None:
    """The arguments of the distribution's methods that ``call`` (``DIST(args...)``) freezes:
    its own, or for ``multivariate_normal`` those its ``logpdf`` reads, by keyword (the
    others, which only its cdf and rvs read, must be literals). None where they do not fit."""
    if not _is_multivariate_normal(dist):
        return list(call.args), list(call.keywords)
    if len(call.args) > len(_MVN):
        return None
    bound = dict(zip(_MVN, call.args))
    for k in call.keywords:
        if k.arg not in _MVN or k.arg in bound:
            return None
        bound[k.arg] = k.value
    if not all(_literal(v) for p, v in bound.items() if p not in _MVN_READ):
        return None
    return [], [ast.keyword(arg=p, value=bound[p]) for p in _MVN_READ if p in bound]


def _construction(stmt: ast.stmt, env: dict[str, Any], local: set[str]):
    """``(d, methods)`` where ``stmt`` is ``d = DIST(args...)``, else None."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return None
    methods = _constructor(stmt.value, env, local)
    return None if methods is None else (stmt.targets[0].id, methods)


def _constructor(node: ast.expr, env: dict[str, Any], local: set[str]) -> dict[str, str] | None:
    """The methods lowered where ``node`` is ``DIST(args...)`` (no ``*``, no ``**``), else
    None."""
    if not (isinstance(node, ast.Call) and is_static(node.func, env, local)):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    try:
        dist = _static_value(node.func, env)
    except AttributeError:
        return None
    methods = _distribution_methods(dist)
    return None if methods is None or _arguments(node, dist) is None else methods


def _inline(node: ast.AST, env: dict[str, Any], local: set[str]) -> ast.expr | None:
    """The argument ``x`` where ``node`` is ``DIST(args...).method(x)`` and the order in
    which Python evaluates ``args`` and ``x`` cannot matter (one of them calls nothing),
    else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    methods = _constructor(node.func.value, env, local)
    x = None if methods is None else _argument(node, methods)
    if x is None:
        return None
    made = node.func.value
    parameters = [*made.args, *(k.value for k in made.keywords)]
    if _acts(x, env, local) and any(_acts(a, env, local) for a in parameters):
        return None
    return x


def _acts(node: ast.expr, env: dict[str, Any], local: set[str]) -> bool:
    """Whether evaluating ``node`` may do more than compute a value: it calls something
    other than a numpy ufunc (without ``out=``), or binds a name."""
    for n in ast.walk(node):
        if isinstance(n, ast.NamedExpr):
            return True
        if isinstance(n, ast.Call):
            if not is_static(n.func, env, local) or any(k.arg in (None, "out") for k in n.keywords):
                return True
            try:
                callee = _static_value(n.func, env)
            except AttributeError:
                return True
            numpy = sys.modules.get("numpy")
            if numpy is None or not isinstance(callee, numpy.ufunc):
                return True
    return False


def _only_asked_for_values(body: list[ast.stmt], name: str, methods: dict[str, str]) -> bool:
    """Whether ``name`` is bound once in ``body`` (by its construction) and every read of
    it calls one of ``methods`` with one argument, none in a nested function."""
    everywhere = sum(isinstance(n, ast.Name) and n.id == name for s in body for n in ast.walk(s))
    outer = [n for n in _outer_nodes(body) if isinstance(n, ast.Name) and n.id == name]
    if everywhere != len(outer):  # (read or bound in a nested function)
        return False
    calls: set[int] = set()
    bindings = 0
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.Call) and _method_call(node, name, methods) is not None:
            calls.add(id(node.func.value))
        elif isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load) and id(node) not in calls:
                return False
            bindings += not isinstance(node.ctx, ast.Load)
        elif _binds(node, name):
            return False
    return bindings == 1


def _method_call(node: ast.Call, name: str, methods: dict[str, str]) -> ast.expr | None:
    """The argument of ``name.method(x)`` (or ``name.method(x=x)``), else None."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return _argument(node, methods) if func.value.id == name else None
    return None


def _argument(node: ast.Call, methods: dict[str, str]) -> ast.expr | None:
    """The one argument of ``<object>.method(x)`` (or ``.method(x=x)``) for one of
    ``methods``, else None."""
    method = node.func.attr
    if method not in methods:
        return None
    if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    if not node.args and len(node.keywords) == 1 and node.keywords[0].arg == methods[method]:
        return node.keywords[0].value
    return None


def _binds(node: ast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name`` other than by assignment (a parameter of a nested
    function or lambda, ``global``, an import, a handler's or a pattern's name)."""
    if isinstance(node, ast.arg):
        return node.arg == name
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return name in node.names
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0]) == name
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == name
    return isinstance(node, ast.MatchMapping) and node.rest == name


class _Lowering:
    """Replaces the constructions and the method calls of the frozen distributions."""

    def __init__(self, frozen: dict, env: dict[str, Any], local: set[str], namer: Namer) -> None:
        self.frozen = frozen
        self.env = env
        self.local = local
        self.namer = namer
        #: each distribution's name -> (DIST, positional arguments, keyword arguments,
        #: the assignments naming them), planned before any call is written (a loop may
        #: call the distribution above the statement that makes it)
        self.made: dict[str, tuple[ast.expr, list, list, list[ast.Assign]]] = {}

    def run(self, body: list[ast.stmt]) -> list[ast.stmt]:
        for stmt in _walk_statements(body):
            found = _construction(stmt, self.env, self.local)
            if found is not None and found[0] in self.frozen:
                self.made[found[0]] = self.plan(stmt, found[0])
        return self.block(body)

    def plan(self, stmt: ast.Assign, name: str) -> tuple:
        """``d = DIST(a, k=v)``: its arguments as names bound to them (``d_loc = a``, named
        after the parameter of ``DIST`` they give), constants in place."""
        call = stmt.value
        dist = _static_value(call.func, self.env)
        shapes = [p.strip() for p in (getattr(dist, "shapes", None) or "").split(",")]
        positional = [*filter(None, shapes), "loc", "scale"]
        given, named = _arguments(call, dist)
        assigns: list[ast.Assign] = []

        def held(value: ast.expr, label: str) -> ast.expr:
            if _literal(value):
                return value
            fresh = self.namer.fresh(f"{name}_{label}")
            target = ast.Name(id=fresh, ctx=ast.Store())
            assigns.append(ast.copy_location(ast.Assign(targets=[target], value=value), stmt))
            return ast.Name(id=fresh, ctx=ast.Load())

        args = [
            held(a, positional[i] if i < len(positional) else f"arg{i}")
            for i, a in enumerate(given)
        ]
        keywords = [ast.keyword(arg=k.arg, value=held(k.value, k.arg)) for k in named]
        return call.func, args, keywords, assigns

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            found = _construction(stmt, self.env, self.local)
            if found is not None and found[0] in self.made:
                assigns = self.made[found[0]][3]
                for assign in assigns:
                    assign.value = self.node(assign.value)
                out.extend(assigns or [ast.copy_location(ast.Pass(), stmt)])
                continue
            self.fields(stmt)
            out.append(stmt)
        return out

    def fields(self, node: ast.AST) -> None:
        """``node``'s parts lowered: statement lists by :meth:`block`, the rest by
        :meth:`node`."""
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    setattr(node, field, self.block(value))
                else:
                    setattr(
                        node, field, [self.node(v) if isinstance(v, ast.AST) else v for v in value]
                    )
            elif isinstance(value, ast.AST):
                setattr(node, field, self.node(value))

    def node(self, node: ast.AST) -> ast.AST:
        self.fields(node)
        x = _inline(node, self.env, self.local)
        if x is not None:  # DIST(args...).method(x)
            made = node.func.value
            args, keywords = _arguments(made, _static_value(made.func, self.env))
            return self.call(node, made.func, x, args, keywords)
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in self.made
        ):
            return node
        name = node.func.value.id
        dist, args, keywords, _ = self.made[name]
        return self.call(node, dist, _method_call(node, name, self.frozen[name]), args, keywords)

    def call(self, node: ast.Call, dist: ast.expr, x: ast.expr, args: list, keywords: list):
        """``DIST.method(x, *args, **keywords)``, where ``node`` calls ``method`` of a
        frozen ``DIST``."""
        method = ast.Attribute(value=copy_tree(dist), attr=node.func.attr, ctx=ast.Load())
        call = ast.Call(
            func=method,
            args=[x, *(copy_tree(a) for a in args)],
            keywords=[ast.keyword(arg=k.arg, value=copy_tree(k.value)) for k in keywords],
        )
        return ast.copy_location(call, node)


def _literal(node: ast.expr) -> bool:
    """Whether ``node`` is a literal (``2.0``, ``-1``, ``(1, 2)``): written in place."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True
