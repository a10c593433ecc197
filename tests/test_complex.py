"""Issue 18, items 8 and 9: complex numbers and ``numpy.fft``.

Real parameters in, a real value out, complex numbers between (``functions_complex.py``:
filters, spectra, phasors, transfer matrices, Fourier derivatives and blurs). Every
function's gradient in both modes and its Hessian are compared with autograd running
the same source, at points hypothesis draws; autograd's convention is srcgrad's
(``dL = Re(z_bar * dz)``, see ``srcgrad/rules/complex_numbers.py``). What srcgrad does
not differentiate yet on complex numbers is refused at the user's line, never a number:
rows of :func:`test_refused`.
"""

from __future__ import annotations

import types

import autograd
import functions_complex as fc
import numpy as np
import pytest
from autograd_oracle import autograd_twin
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import srcgrad
from srcgrad.errors import NoDerivativeError, UnsupportedSyntaxError

MODES = ("reverse", "forward")


def values(shape, low=-2.0, high=2.0):
    return arrays(
        np.float64,
        shape,
        elements=st.floats(low, high, allow_nan=False, allow_subnormal=False),
    )


#: each function with a strategy for its arguments (kept where the function is smooth:
#: |h| and angle(w) away from 0, 1 / cos(z) away from its poles)
ROWS = {
    "phasor_sum": st.tuples(values(4)),
    "filter_response": st.tuples(
        values(2), values(1, -0.5, 0.5), values(6, 0.1, 3.0), values(6, 0.0, 1.0)
    ),
    "power_spectrum": st.tuples(values(8), values(5, 0.0, 1.0)),
    "from_spectrum": st.tuples(values(5), values(5)),
    "complex_functions": st.tuples(values(3, 0.5, 1.2)),
    "transfer_matrix": st.tuples(values(3, 1.0, 2.0), values(3, 0.0, 1.0)),
    "spectral_derivative": st.tuples(values(8), st.floats(0.1, 1.0)),
    "image_blur": st.tuples(values((4, 4)), values((4, 4))),
    "cumulative_phase": st.tuples(values(5)),
    "real_image_spectrum": st.tuples(values((4, 4)), values((4, 3))),
}


def _smooth(name, args) -> bool:
    """Away from the points where ``abs`` and ``angle`` have no derivative."""
    if name == "phasor_sum":
        return abs(np.sum(np.exp(1j * args[0]))) > 1e-3
    if name == "filter_response":
        b, a, w, _ = args
        z = np.exp(-1j * w)
        return np.min(np.abs((b[0] + b[1] * z) / (1.0 + a[0] * z))) > 1e-3
    if name == "power_spectrum":
        return np.min(np.abs(np.fft.rfft(args[0]))) > 1e-3
    if name == "spectral_derivative":
        return np.min(np.abs(np.fft.fft(args[0] * args[0]))) > 1e-3
    if name == "cumulative_phase":
        return np.min(np.abs(np.cumsum(np.exp(1j * args[0])))) > 1e-3
    return True


@pytest.mark.parametrize("name", sorted(ROWS))
@given(data=st.data())
def test_gradient_and_hessian_agree_with_autograd(name, data):
    args = data.draw(ROWS[name])
    if not _smooth(name, args):
        return
    f = getattr(fc, name)
    twin = autograd_twin(f)
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    want = autograd.grad(twin, wrt)(*args)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
        for g, w in zip(got, want):
            assert not np.iscomplexobj(g)
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
    first = wrt[0]
    hessian = srcgrad.hessian(f, wrt=first)(*args)
    np.testing.assert_allclose(hessian, autograd.hessian(twin, first)(*args), rtol=1e-6, atol=1e-8)


def attributes_and_methods(x, y):
    z = x + 1j * y
    w = z * z - 0.5 * z.conj() + np.conj(z) * 0.25
    return np.sum(np.angle(w)) + np.sum(w.real * w.imag) + np.sum(np.abs(z.conjugate() * w))


def _central(f, args, k, h=1e-6):
    out = np.zeros_like(args[k])
    for i in np.ndindex(args[k].shape):
        up = [a.copy() for a in args]
        down = [a.copy() for a in args]
        up[k][i] += h
        down[k][i] -= h
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


@given(x=values(3, 0.3, 1.5), y=values(3, 0.3, 1.5))
def test_attributes_and_methods_against_differences(x, y):
    """``z.real``, ``z.imag``, ``z.conj()``, ``z.conjugate()`` (autograd has no box
    attributes for these): central differences decide, and for the Hessian the
    differences of srcgrad's own gradient."""
    args = (x, y)
    for mode in MODES:
        got = srcgrad.grad(attributes_and_methods, wrt=(0, 1), mode=mode)(*args)
        for k in (0, 1):
            np.testing.assert_allclose(
                got[k], _central(attributes_and_methods, args, k), rtol=1e-5, atol=1e-6
            )
    gradient = srcgrad.grad(attributes_and_methods)
    np.testing.assert_allclose(
        srcgrad.hessian(attributes_and_methods)(*args),
        np.array([_central(lambda a, b, i=i: gradient(a, b)[i], args, 0) for i in range(3)]),
        rtol=1e-5,
        atol=1e-6,
    )


def rotate(x):
    return np.exp(1j * x) * (1.0 + x)


def through_a_helper(x):
    z = rotate(x)
    return np.abs(np.sum(z)) + np.sum(np.angle(z * 1j))


def test_a_function_of_the_users_returning_complex_numbers():
    """The caller knows the helper's result is complex (its own code says so), so
    ``np.abs`` of it takes the rule for complex numbers: without that, ``sign(z)``
    would stand for ``conj(z) / |z|`` and the gradient would be wrong."""
    x = np.array([0.3, -0.2, 0.9])
    want = autograd.grad(autograd_twin(through_a_helper))(x)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(through_a_helper, mode=mode)(x), want, rtol=1e-10)


def test_the_rules_for_complex_operands_are_not_those_for_real_ones():
    """``np.abs`` of a real value and of a complex one: a test that fails if the
    rule for complex operands were not taken (``sign(z)`` is not ``conj(z) / |z|``)."""

    def f(x):
        return np.sum(np.abs(x * (1.0 + 2j)))

    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(srcgrad.grad(f)(x), np.sqrt(5.0) * np.sign(x), rtol=1e-12)
    np.testing.assert_allclose(srcgrad.grad(f, mode="forward")(x), np.sqrt(5.0) * np.sign(x))


# -- refused: a clear error at the user's line ------------------------------------------------
def maximum_of_complex(x):
    z = np.exp(1j * x)
    return np.sum(np.abs(np.maximum(z, 0.5)))


def item_write(x):
    z = np.zeros(3, dtype=complex)
    z[0] = np.exp(1j * x[0])
    return np.abs(z[0])


def update_in_place(x):
    a = np.ones(3) + 0j
    a += np.exp(1j * x)
    return np.sum(np.abs(a))


def complex_result(x):
    return np.sum(np.exp(1j * x))


def helper_of_complex(x):
    """(Written out where it is called since issue 18's leftover item 5: checked in
    test_complex_helpers.py.)"""
    return np.sum(np.abs(rotate(np.exp(1j * x))))


def rfft_of_complex(x):
    return np.sum(np.abs(np.fft.rfft(np.exp(1j * x))))


def rfftn_of_complex(x):
    return np.sum(np.abs(np.fft.rfftn(np.exp(1j * x))))


def hfft_of_complex(x):
    return np.sum(np.fft.hfft(np.exp(1j * x)))


def fftn_into_out(x):
    out = np.zeros((1, 3), dtype=complex)
    return np.sum(np.abs(np.fft.fftn(x[None] * 1.0, out=out)))


def sort_of_complex(x):
    return np.sum(np.abs(np.sort(np.exp(1j * x))))


REFUSED = {
    maximum_of_complex: "not yet through np.maximum",
    item_write: "writes a value",
    update_in_place: "a = a + ...",
    complex_result: "the value returned is complex",
    rfft_of_complex: "takes real arrays",
    rfftn_of_complex: "np.fft.rfftn takes real arrays",
    fftn_into_out: "leave out `out=`",
    hfft_of_complex: "no derivative rule for 'numpy.fft.hfft'",
    sort_of_complex: "not yet through np.sort",
}


@pytest.mark.parametrize("f", list(REFUSED), ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_refused(f, mode):
    x = np.array([0.3, -0.2, 0.9])
    with pytest.raises((UnsupportedSyntaxError, NoDerivativeError, TypeError)) as caught:
        srcgrad.grad(f, mode=mode)(x)
    message = str(caught.value)
    if f is complex_result and mode == "forward":  # (found when the gradient comes out)
        assert "came out complex" in message
        return
    assert REFUSED[f] in message
    assert message.startswith(f"{__file__}:")  # the user's file and line
    told = message.removeprefix(__file__)  # (a path may hold "t1": /tmp/dist1/...)
    assert "t1" not in told and "t2" not in told


def complex_argument(z, w):
    return np.real(np.sum(z * z * w)) + np.sum(np.abs(z) ** 2) + np.sum(np.angle(z + 2.0))


@given(re=values(3, 0.2, 1.5), im=values(3, 0.2, 1.5), w=values(3), t_re=values(3), t_im=values(3))
def test_complex_arguments_in_reverse_mode_and_jvp(re, im, w, t_re, t_im):
    """A complex argument's gradient is autograd's (and JAX's) ``df/dx - 1j df/dy``; a
    jvp takes a complex tangent: ``Re(z_bar * dz)``."""
    z = re + 1j * im
    twin = autograd_twin(complex_argument)
    want = autograd.grad(twin, (0, 1))(z, w)
    got = srcgrad.grad(complex_argument, wrt=(0, 1))(z, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)
    assert np.iscomplexobj(got[0]) and not np.iscomplexobj(got[1])
    dz = t_re + 1j * t_im
    _, tangent = srcgrad.jvp(complex_argument)(z, w, dz)
    np.testing.assert_allclose(tangent, np.real(np.sum(want[0] * dz)), rtol=1e-9, atol=1e-11)
    # a number too
    np.testing.assert_allclose(
        srcgrad.grad(complex_argument)(complex(z[0]), float(w[0])),
        autograd.grad(twin)(complex(z[0]), float(w[0])),
        rtol=1e-10,
    )


def test_complex_arguments_not_differentiated_are_seen_too():
    """A complex argument reaches ``np.abs`` through the rule for complex numbers."""

    def scaled(x, c):
        return np.sum(np.abs(x * c))

    x, c = np.array([0.5, -1.0]), np.array([1 + 2j, 0.5j])
    for mode in MODES:
        np.testing.assert_allclose(
            srcgrad.grad(scaled, mode=mode)(x, c), np.abs(c) * np.sign(x), rtol=1e-12
        )


def test_complex_arguments_where_srcgrad_does_not_take_them_yet():
    z = np.array([1 + 2j, 0.5 - 1j])
    w = np.array([0.3, -0.7])
    for call, message in [
        (lambda: srcgrad.grad(complex_argument, mode="forward")(z, w), "mode='reverse'"),
        (lambda: srcgrad.hessian(complex_argument)(z, w), "complex"),
        (lambda: srcgrad.hvp(complex_argument)(z, w, z), "derivative of a derivative"),
        (lambda: srcgrad.grad(complex_argument)({"a": z}, w), "complex argument"),
    ]:
        if message is None:
            continue
        with pytest.raises(TypeError, match=message):
            call()

    def magnitude(z):
        return np.abs(z) * 2.0

    with pytest.raises(TypeError, match="mode='reverse'"):
        srcgrad.jacobian(magnitude, mode="forward")(z)
    rows = srcgrad.jacobian(magnitude, mode="reverse")(z)
    np.testing.assert_allclose(rows, np.diag(2 * np.conj(z) / np.abs(z)), rtol=1e-12)


SETTINGS = types.SimpleNamespace(C=np.array([1 + 2j, 0.5 - 1j]))


def scaled_by_settings(x):
    return x * SETTINGS.C


def through_an_attribute(x):
    return np.sum(np.abs(scaled_by_settings(x)))


@pytest.mark.parametrize("mode", MODES)
def test_a_helper_reading_complex_numbers_off_an_object(mode):
    """The helper's result is complex through ``SETTINGS.C``, which no name in its code
    says: the caller must still take ``np.abs`` of it as a complex number."""
    x = np.array([0.7, -1.3])
    got = srcgrad.grad(through_an_attribute, mode=mode)(x)
    np.testing.assert_allclose(got, np.abs(SETTINGS.C) * np.sign(x), rtol=1e-12)


def zero_padded(h):
    """Zero padding and cutting by ``n=`` (an odd-length ``rfft``, which autograd's rule
    does not take: central differences decide)."""
    power = np.abs(np.fft.rfft(h, n=12)) ** 2
    cut = np.real(np.fft.fft(h, n=4) * np.fft.ifft(h * h, n=9)[:4])
    return np.sum(power) + np.sum(cut) + np.sum(np.abs(np.fft.rfft(h * 2.0, n=5)))


@given(h=values(7))
def test_transforms_of_another_length_pad_or_cut(h):
    if np.min(np.abs(np.fft.rfft(h * 2.0, n=5))) < 1e-3:
        return
    want = _central(zero_padded, (h,), 0)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(zero_padded, mode=mode)(h), want, atol=1e-5)
    gradient = srcgrad.grad(zero_padded)
    rows = np.array([_central(lambda a, i=i: gradient(a)[i], (h,), 0) for i in range(7)])
    np.testing.assert_allclose(srcgrad.hessian(zero_padded)(h), rows, atol=1e-4)


#: functions of numpy.fft at odd lengths and with s= (autograd's rules for the real
#: transforms refuse odd lengths): central differences decide, and for the Hessian the
#: differences of srcgrad's own gradient
SHAPED = {
    "irfft_of_other_lengths": (7,),
    "irfft_of_a_real_array": (5,),
    "transforms_with_s": (3, 4),
    "real_transforms_of_odd_shapes": (3, 5),
}


@pytest.mark.parametrize("name", sorted(SHAPED))
@given(data=st.data())
def test_transforms_of_odd_lengths_and_shapes_against_differences(name, data):
    f = getattr(fc, name)
    x = data.draw(values(SHAPED[name]))
    want = _central(f, (x,), 0)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(x), want, atol=1e-5)
    gradient = srcgrad.grad(f)
    rows = [_central(lambda a, i=i: gradient(a)[i], (x,), 0) for i in np.ndindex(x.shape)]
    hessian = np.reshape(rows, x.shape + x.shape)
    np.testing.assert_allclose(srcgrad.hessian(f)(x), hessian, atol=1e-4)
