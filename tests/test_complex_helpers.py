"""Issue 18, leftover item 5: complex numbers to second order through functions of the
user's. Real-valued functions of real inputs with complex intermediates, where those go
through a function of the module, a nested ``def``, a closure a factory makes or
``np.fft``, differentiate as autograd does, in both modes and to second order. A
function of the user's given complex numbers is written out where it is called
(``Normalized.written_out``: the analysis finds the calls, normalize lowers the
function again), as a nested function is; one that cannot be written out (an early
``return``, recursion) is refused at the user's line, saying what to write, and so is a
call only some paths evaluate."""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
MODES = ("reverse", "forward")
HERE = r"(?s)test_complex_helpers.py:\d+:\n"


def squared_modulus(z):
    return z * np.conj(z)


def phasor(t):
    return np.exp(1j * t)


def make_lowpass(a):
    """The frequency response of a first-order low-pass filter of time constant ``a``."""

    def response(w):
        return 1.0 / (1.0 + 1j * w * a)

    return response


def written_in_place(x):
    z = x[0] + 1j * x[1]
    w = z * z
    return np.real(np.sum(w * np.conj(w))) + x[2] * np.imag(w)


def through_a_nested_def(x):
    def modulus(z):
        return z * np.conj(z)

    z = x[0] + 1j * x[1]
    return np.real(np.sum(modulus(z * z))) + x[2] * np.imag(z * z)


def through_a_factory_closure(x):
    response = make_lowpass(x[0] * x[0] + 0.5)  # (the time constant depends on x)
    ws = np.linspace(0.0, 3.0, 4) + x[1]
    gain = np.abs(response(ws)) ** 2
    return np.sum(gain) + np.sum(np.cos(np.angle(response(x))))


def through_fft(x):
    spectrum = np.fft.fft(x * np.exp(1j * x))
    return np.sum(np.abs(spectrum) ** 2 * np.cos(x))


def through_a_module_function(x):
    z = x[0] + 1j * x[1]
    return np.real(np.sum(squared_modulus(z * z)))


def helper_making_complex(x):
    return np.sum(np.real(phasor(x) * np.conj(phasor(2.0 * x))))


def rotate(z, x):
    w = z * np.exp(1j * x)
    return w * (3.0 + x)  # (never zero here: |w| has no derivative at 0)


def twice_through_helpers(x):
    z = phasor(x)
    return np.sum(np.abs(rotate(rotate(z, x), 2.0 * x)) ** 2 + np.real(squared_modulus(z)))


WORKS = [
    written_in_place,
    through_a_nested_def,
    through_a_factory_closure,
    through_fft,
    through_a_module_function,
    helper_making_complex,
    twice_through_helpers,
]


@pytest.mark.parametrize("f", WORKS, ids=lambda f: f.__name__)
def test_complex_intermediates_to_second_order(f):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(X)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(X), expected, rtol=1e-10)
    hessian = autograd.hessian(twin)(X)
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian, rtol=1e-9, atol=1e-12)
    grad_of_grad = srcgrad.jacobian(srcgrad.grad(f), mode="forward")(X)
    np.testing.assert_allclose(grad_of_grad, hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, (X,), order=2)


def early_return(z):
    if np.real(np.sum(z)) > 100.0:
        return z
    return z * z


def recursive(z, n):
    if n == 0:
        return z
    return recursive(z * z, n - 1)


def into_an_early_return(x):
    return np.sum(np.abs(early_return(x * 1j)))


def into_recursion(x):
    return np.sum(np.abs(recursive(x * 1j, 2)))


def on_one_path(x):
    z = x * 1j
    return np.sum(np.abs(squared_modulus(z) if x[0] > 0 else z))


@pytest.mark.parametrize(
    "f, match",
    [
        (into_an_early_return, r"early_return\(x \* 1j\).*given complex.*one `return` at its end"),
        (into_recursion, r"recursive\(x \* 1j, 2\).*given complex.*`recursive` where it is"),
        (on_one_path, r"squared_modulus\(z\) if.*not yet through a call to a function of yours"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_cannot_be_written_out_is_refused(f, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=HERE + r".*" + match) as info:
        srcgrad.grad(f, mode=mode)(X)
    assert "np.real(z) and np.imag(z)" in str(info.value)


def test_the_generated_code_writes_the_function_out():
    derivative = srcgrad.grad(through_a_module_function)
    derivative(X)
    source = derivative.source
    assert "squared_modulus" not in source.split("# grad of")[0], source
    assert "np.conj(z_1)" in source, source


def test_a_new_code_of_the_function_written_out_makes_the_code_again(monkeypatch):
    derivative = srcgrad.grad(through_a_module_function)
    before = derivative(X)
    monkeypatch.setattr(squared_modulus, "__code__", (lambda z: z * z).__code__)
    after = derivative(X)
    twin = autograd_twin(through_a_module_function)
    np.testing.assert_allclose(after, autograd.grad(twin)(X), rtol=1e-10)
    assert not np.allclose(before, after)
