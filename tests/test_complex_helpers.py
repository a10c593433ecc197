"""Issue 18, leftover item 5: complex numbers to second order through functions of the
user's. Real-valued functions of real inputs with complex intermediates, where those go
through a nested ``def``, a closure a factory makes (both written out where they are
called) or ``np.fft``, differentiate as autograd does, in both modes and to second
order. A complex value passed to a module-level function of the user's is refused at the
user's line, saying what to write (the function's statements in place, a nested
``def``, or its real and imaginary parts); so is the Hessian where a helper makes
complex numbers of real ones (its first derivatives work)."""

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


WORKS = [written_in_place, through_a_nested_def, through_a_factory_closure, through_fft]


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


def through_a_module_function(x):
    z = x[0] + 1j * x[1]
    return np.real(np.sum(squared_modulus(z * z)))


def helper_making_complex(x):
    return np.sum(np.real(phasor(x) * np.conj(phasor(2.0 * x))))


def test_a_helper_making_complex_numbers_of_real_ones_first_order():
    twin = autograd_twin(helper_making_complex)
    expected = autograd.grad(twin)(X)
    for mode in MODES:
        got = srcgrad.grad(helper_making_complex, mode=mode)(X)
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    check_grads(helper_making_complex, (X,))


_ADVICE = r".*not yet through a call to a function of yours.*nested `def`.*np.real\(z\)"


@pytest.mark.parametrize(
    "derivative",
    [
        lambda f: srcgrad.grad(f, mode="reverse"),
        lambda f: srcgrad.grad(f, mode="forward"),
        srcgrad.hessian,
    ],
    ids=["reverse", "forward", "hessian"],
)
def test_a_complex_value_into_a_module_function_is_refused(derivative):
    match = HERE + r".*squared_modulus\(z \* z\)" + _ADVICE
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        derivative(through_a_module_function)(X)


def test_the_hessian_through_a_helper_making_complex_numbers_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=HERE + r".*phasor\(x\)" + _ADVICE):
        srcgrad.hessian(helper_making_complex)(X)
