"""Issue 18, items 3-5 (4, dicts): dicts built in the function (``{"w": w}``,
``dict(w=w)``) and read back by constant keys, looped over (``.items()``, ``.values()``),
or returned whole (``has_aux=True`` with a dict of metrics). Each value gets a variable
of its own, which the reads read (``normalize.dicts``). Checked against autograd running
the same source and finite differences, both modes, second order; a dict written into,
passed on or read by a computed key is refused with what to write instead."""

from __future__ import annotations

import autograd
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

W = np.array([0.5, -0.2])
X = np.array([[1.0, 2.0], [0.3, -0.1]])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)


def test_a_dict_read_back_by_its_keys_and_looped_over():
    twin = autograd_twin(fe.dict_read_back)
    expected = autograd.grad(twin, (0, 1))(W, 0.3, X)
    for mode in MODES:
        got = srcgrad.grad(fe.dict_read_back, wrt=(0, 1), mode=mode)(W, 0.3, X)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-10)
        assert got[1] == pytest.approx(expected[1], rel=1e-10)
    hessian = autograd.hessian(twin)(W, 0.3, X)
    np.testing.assert_allclose(srcgrad.hessian(fe.dict_read_back)(W, 0.3, X), hessian, rtol=1e-9)
    check_grads(fe.dict_read_back, (W, 0.3, X), wrt=(0, 1), order=2)


@pytest.mark.parametrize("f", [fe.dict_of_metrics, fe.dict_display_returned])
def test_has_aux_with_a_dict_of_metrics(f):
    twin = autograd_twin(f)
    expected = autograd.grad(lambda w, x: twin(w, x)[0])(W, X)
    value, metrics = f(W, X)
    for mode in MODES:
        grad, aux = srcgrad.grad(f, has_aux=True, mode=mode)(W, X)
        np.testing.assert_allclose(grad, expected, rtol=1e-10)
        assert aux.keys() == metrics.keys()
        for key in metrics:
            assert aux[key] == pytest.approx(metrics[key], rel=1e-12)
        (got_value, aux), grad = srcgrad.value_and_grad(f, has_aux=True, mode=mode)(W, X)
        assert got_value == pytest.approx(value) and aux.keys() == metrics.keys()


def test_the_values_read_by_their_variables_in_the_generated_code():
    derivative = srcgrad.grad(fe.dict_of_metrics, has_aux=True)
    derivative(W, X)
    source = derivative.source
    assert "metrics_norm = " in source and "dict(loss=metrics_loss, norm=metrics_norm)" in (
        source
    ), source


@pytest.mark.parametrize(
    "f, error, match",
    [
        (
            fe.dict_written_in_a_loop,
            srcgrad.UnsupportedSyntaxError,
            HERE + r'.*d\["w"\] = d\["w"\] \* 2.0\n.*does not follow writes into here',
        ),
        (
            fe.dict_passed_on,
            srcgrad.NoDerivativeError,
            HERE + r".*_reads_w\(d, x\)\n.*a dict built in the function carries a derivative",
        ),
        (
            fe.dict_read_by_a_variable,
            srcgrad.NoDerivativeError,
            HERE + r'.*d = \{"w": w\}\n.*by constant keys',
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, error, match, mode):
    with pytest.raises(error, match=match):
        srcgrad.grad(f, mode=mode)(W, X[0])
