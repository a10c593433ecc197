"""srcgrad against an oracle that did not come from srcgrad: autograd.

Every function of the test corpora (``corpus_control_flow.py``, the
``functions_*.py`` files behind the rule tests) runs again with ``np`` rebound
to ``autograd.numpy`` (``autograd_oracle.autograd_twin``), and srcgrad's
derivatives are compared with autograd's element by element:

- first order: ``vjp`` and ``jvp``, ``grad`` and ``value_and_grad`` in both modes,
  with respect to all differentiable arguments at once (and, in the thorough
  profile, each alone);
- second order, with respect to *every* argument of the derivative, the cotangent
  ``dout`` of a vjp and the tangents of a jvp included: the jvp of the vjp (``d/d
  dout`` of a vjp is the Jacobian applied to a tangent), the jvp of the jvp, the jvp
  of the gradient, the Hessian-vector product, the gradient of a jvp, the Hessian, the
  gradient of a vjp. autograd builds each of these as a function of all its
  arguments, and differentiates it again the same way (``autograd_oracle.ag_jvp``:
  reverse over reverse, so only autograd's reverse-mode rules are trusted).

srcgrad may refuse a derivative of a derivative with a clear error; it may not
return a wrong number, raise an internal exception, or change an argument. Where
srcgrad and autograd disagree, central differences of srcgrad's own lower-order
code decide (``autograd_oracle.Referee``): autograd has rules that are wrong at
points (``x ** y`` at ``y = 0`` in second order, ``np.full_like(x, c)`` with respect
to ``c``, ``np.repeat`` along a negative axis, ``np.kron`` of mixed ranks, batched
``eigh``), and those points are left to finite differences.

Bugs this oracle found are strict xfail reproductions in
``test_adversarial_programs.py``; while one is open, the comparison it breaks is
switched off corpus-wide by a named gap (``autograd_oracle.KNOWN_GAPS``: the
cotangent argument of a vjp's derivatives, the structure of an all-zero second
derivative, grad of a jvp through a helper returning a tuple, the Hessian with
respect to a numpy scalar), or the row is marked in ``KNOWN``. When the reproduction
starts to pass, remove its mark and its gap, and the whole corpus checks it again.

Where the inputs come from: the control-flow corpus lists its points; the rule
tests draw theirs with hypothesis, so :func:`test_rule_rows` runs each rule test's
own hypothesis strategy (its rows, shapes, domains, Python and numpy scalars) with
``check`` replaced by the comparison with autograd.

A function autograd cannot run (a write into an array, a function autograd does not
have, a value autograd computes differently) or whose autograd derivative is not
numpy's (a cast to int or bool, which autograd differentiates as the identity) is
skipped, saying why: ``pytest -rs`` lists them.

The ``ci`` profile (the default) checks one or two points per function, the jvp of the
vjp and one more second-order composition in turn; ``thorough`` checks more points,
each argument alone as well, all compositions, and float32::

    SRCGRAD_HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_autograd_oracle.py
"""

from __future__ import annotations

import importlib
import itertools
import os
from collections import Counter
from typing import Any

import corpus_control_flow as cf
import functions_for_custom as fc
import numpy as np
import pytest
from autograd_oracle import KNOWN_GAPS, NoAutograd, Oracle, first_order_skips, rotation
from hypothesis import Phase, given, settings

THOROUGH = os.environ.get("SRCGRAD_HYPOTHESIS_PROFILE") == "thorough"
#: a file to append what each comparison did to (checked, refused, unchecked, autograd
#: wrong), one line each, for a survey: SRCGRAD_ORACLE_REPORT=/tmp/oracle.tsv
REPORT = os.environ.get("SRCGRAD_ORACLE_REPORT")

#: the rule tests whose ``check`` calls are replayed against autograd
RULE_MODULES = [
    "test_rules",
    "test_rules_elementwise",
    "test_rules_reductions",
    "test_rules_shapes",
    "test_rules_linalg",
    "test_rules_numeric",
    "test_rules_scipy_special",
]

#: srcgrad bugs this oracle shows, by test id: strict xfail, so that the fix flips them
KNOWN: dict[str, str] = {}


def _mark(case_id: str) -> list[Any]:
    # (strict in the derandomized ci profile; the thorough profile draws anew each run)
    reason = KNOWN.get(case_id)
    return [pytest.mark.xfail(strict=not THOROUGH, reason=reason)] if reason else []


def check_against_autograd(
    func: Any,
    args: Any,
    index: int,
    second: bool = True,
    seed: int = 0,
    refusable: bool = False,
) -> Oracle:
    """Run the comparison (second order too where ``second`` or thorough); NoAutograd
    when autograd cannot give the first-order derivatives."""
    oracle = Oracle(func, args, seed=seed, gaps=KNOWN_GAPS, refusable=refusable)
    kinds = rotation(index, THOROUGH) if second or THOROUGH else []
    try:
        oracle.run(kinds, every=THOROUGH, skip=first_order_skips(index, THOROUGH))
    finally:
        if REPORT:  # what was checked, refused, or left to finite differences
            name = f"{func.__module__}.{func.__name__}"
            with open(REPORT, "a") as out:
                for what, items in (
                    ("checked", oracle.checked),
                    ("refused", oracle.refused),
                    ("unchecked", oracle.unchecked),
                    ("autograd wrong", oracle.autograd_wrong),
                ):
                    out.writelines(f"{what}\t{name}\t{item}\n" for item in items)
    return oracle


# -- the control-flow corpus ---------------------------------------------------------------------
CONTROL_FLOW = [
    pytest.param(
        case.func, point, k, j, id=f"{case.func.__name__}-{j}", marks=_mark(case.func.__name__)
    )
    for k, case in enumerate(cf.CASES)
    for j, point in enumerate(case.points)
]


@pytest.mark.parametrize("func, args, index, point", CONTROL_FLOW)
def test_control_flow_corpus(func: Any, args: tuple, index: int, point: int) -> None:
    # second order at the first point of each function (at the others when thorough)
    try:
        check_against_autograd(func, args, index, second=point == 0)
    except NoAutograd as exc:
        pytest.skip(f"autograd cannot be the oracle: {exc}")


# -- the rule tests' functions, at the rule tests' own hypothesis-drawn inputs -------------------
def _value_id(value: Any) -> str:
    for attr in ("name", "__name__"):
        name = getattr(value, attr, None)
        if isinstance(name, str):
            return name
    return str(value)[:30]


def _expand(test: Any) -> list[tuple[dict, str, list]]:
    """The parameter sets of a test's ``parametrize`` marks: (kwargs, id, marks)."""
    axes = []
    for mark in getattr(test, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        ids = mark.kwargs.get("ids")
        options = []
        for k, value in enumerate(values):
            marks: list = []
            pid = None
            if hasattr(value, "values") and hasattr(value, "marks"):  # a pytest.param
                marks, pid, value = list(value.marks), value.id, value.values
            else:
                value = value if len(names) > 1 else (value,)
            if pid is None and ids is not None:
                pid = ids[k] if not callable(ids) else ids(value[0])
            if pid is None:
                pid = "-".join(_value_id(v) for v in value)
            options.append((dict(zip(names, value)), str(pid), marks))
        axes.append(options)
    combined = []
    for combo in itertools.product(*reversed(axes)):
        kwargs: dict = {}
        marks: list = []
        for part, _, m in combo:
            kwargs.update(part)
            marks += m
        combined.append((kwargs, "-".join(pid for _, pid, _ in combo), marks))
    return combined


def _is_float32(value: Any) -> bool:
    return value is np.float32 or getattr(value, "values", None) == (np.float32,)


def _rule_params() -> list[Any]:
    params = []
    for name in RULE_MODULES:
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # pytest.skip at import (no scipy)
            params.append(
                pytest.param(name, None, {}, 0, id=name, marks=pytest.mark.skip(str(exc)))
            )
            continue
        for test_name, test in vars(module).items():
            inner = getattr(getattr(test, "hypothesis", None), "inner_test", None)
            if not test_name.startswith("test_") or inner is None:
                continue
            if "check" not in inner.__code__.co_names:
                continue
            for kwargs, pid, marks in _expand(test):
                if not THOROUGH and any(_is_float32(v) for v in kwargs.values()):
                    continue  # float32: thorough only (the same rules, looser tolerances)
                case_id = f"{name}.{test_name}[{pid}]"
                marks = [
                    pytest.mark.xfail(strict=False, reason=m.kwargs.get("reason", ""))
                    for m in marks
                    if m.name == "xfail"
                ] + _mark(case_id)
                params.append(
                    pytest.param(name, test_name, kwargs, len(params), id=case_id, marks=marks)
                )
    return params


#: hypothesis examples per rule-test parameter set
RULE_EXAMPLES = 6 if THOROUGH else 2


@pytest.mark.parametrize("module_name, test_name, kwargs, index", _rule_params())
def test_rule_rows(module_name: str, test_name: str, kwargs: dict, index: int) -> None:
    module = importlib.import_module(module_name)
    test = getattr(module, test_name)
    compared = 0
    skipped: Counter = Counter()

    def check(func: Any, args: tuple) -> None:
        # second order at the first example autograd can run (at all when thorough)
        nonlocal compared
        try:
            check_against_autograd(func, args, index, second=not compared)
        except NoAutograd as exc:
            skipped[str(exc)] += 1
            return
        compared += 1

    strategy = test.hypothesis._given_kwargs
    phases = list(Phase) if THOROUGH else [Phase.explicit, Phase.generate]
    run = settings(settings.default, max_examples=RULE_EXAMPLES, database=None, phases=phases)(
        given(**strategy)(test.hypothesis.inner_test)
    )
    saved = module.check
    module.check = check
    try:
        run(**kwargs)
    finally:
        module.check = saved
    if not compared:
        reason = skipped.most_common(1)[0][0] if skipped else "no example"
        pytest.skip(f"autograd cannot be the oracle: {reason}")


# -- custom rules: autograd looks inside the primitive, so it checks the user's rules ----------
X = np.array([0.3, -0.5, 1.2])

CUSTOM = [
    pytest.param(fc.uses_lse, (X,), id="uses_lse"),
    pytest.param(fc.uses_scaled, (X, X + 1.0), id="uses_scaled"),
    pytest.param(fc.inactive_primitive, (X, X - 0.5), id="inactive_primitive"),
    pytest.param(fc.uses_stop, (X,), id="uses_stop"),
]
#: the functions of functions_for_custom.py left out, and why
CUSTOM_LEFT_OUT = {
    "uses_wrong": "its rule is deliberately wrong (srcgrad must use it anyway)",
    "uses_forward_only": "a primitive without a reverse rule: an error by design",
    "uses_bad_arity": "a rule returning the wrong number of cotangents: an error by design",
    "uses_no_rules": "a primitive without rules: an error by design",
}


@pytest.mark.parametrize("func, args", CUSTOM)
def test_custom_rules(func: Any, args: tuple) -> None:
    try:
        # (a primitive with one rule: the other mode is refused, clearly, by design)
        check_against_autograd(func, args, index=len(func.__name__), refusable=True)
    except NoAutograd as exc:
        pytest.skip(f"autograd cannot be the oracle: {exc}")


def test_every_custom_function_is_checked_or_left_out_with_a_reason() -> None:
    users = {n for n in vars(fc) if n.startswith(("uses_", "inactive_"))}
    checked = {p.values[0].__name__ for p in CUSTOM}
    assert users == checked | set(CUSTOM_LEFT_OUT)
