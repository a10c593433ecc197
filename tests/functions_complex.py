"""User-style programs with complex intermediates, from signal processing, optics and
control: real parameters in, a real loss out, complex numbers between.
``tests/test_complex.py`` differentiates them and checks against autograd."""

import numpy as np


def phasor_sum(x):
    """The magnitude of a sum of unit phasors (an array factor)."""
    return np.abs(np.sum(np.exp(1j * x)))


def filter_response(b, a, w, target):
    """Least-squares fit of a first-order IIR filter's frequency response."""
    z = np.exp(-1j * w)
    h = (b[0] + b[1] * z) / (1.0 + a[0] * z)
    err = np.abs(h) - target
    return np.sum(err * err)


def power_spectrum(h, target):
    """Fit a signal's power spectrum (``rfft``), plus a phase-shifted energy term."""
    spectrum = np.fft.rfft(h)
    power = np.abs(spectrum) ** 2
    shifted = np.real(np.fft.ifft(np.fft.fft(h) * 1j))
    return np.sum((power - target) ** 2) / 10.0 + np.sum(shifted**2)


def from_spectrum(re, im):
    """A signal synthesized from its half spectrum (``irfft``), then a smooth loss."""
    c = re + 1j * im
    y = np.fft.irfft(c)
    return np.sum(np.sin(y) * np.arange(y.shape[0]))


def phases(x, y):
    """Angles and real/imaginary parts, as attributes, functions and methods."""
    z = x + 1j * y
    w = z * z - 0.5 * np.conjugate(z)
    return np.sum(np.angle(w)) + np.sum(w.real * np.imag(w)) + np.sum(np.real(np.conj(w) * z))


def complex_functions(x):
    """Holomorphic functions of a complex argument: exp, log, sqrt, sin, cos, tanh, powers."""
    z = x + 0.5j
    w = np.sqrt(z) * np.log(z) + np.sin(z) / np.cos(z) + np.tanh(z) + z**3 - 1.0 / z
    return np.sum(np.abs(w) ** 2)


def transfer_matrix(k, d):
    """A product of 2x2 transfer matrices (thin-film optics), real reflectance out."""
    phase = np.exp(1j * k * d)
    m = np.array([[1.0, 0.0], [0.0, 1.0]]) + 0j
    for i in range(d.shape[0]):
        layer = (
            np.array([[1.0, 0.0], [0.0, 0.0]]) * phase[i]
            + np.array([[0.0, 0.0], [0.0, 1.0]]) / phase[i]
        )
        m = m @ layer
    r = m[0, 1] / m[1, 1] + 0.3 * m[0, 0]
    return np.abs(r) ** 2


def spectral_derivative(u, dx):
    """A derivative taken in Fourier space (``fftshift`` pairs included)."""
    n = u.shape[0]
    k = 2 * np.pi * np.fft.fftfreq(n, dx)
    du = np.real(np.fft.ifft(1j * k * np.fft.fft(u)))
    centered = np.fft.ifftshift(np.fft.fftshift(np.fft.fft(u * u)))
    return np.sum(du**2) + np.sum(np.abs(centered)) * 1e-3


def image_blur(img, kernel):
    """A 2-D circular convolution by ``fft2``, and ``fftn``/``ifftn`` on a stack."""
    blurred = np.real(np.fft.ifft2(np.fft.fft2(img) * np.fft.fft2(kernel)))
    cube = np.fft.ifftn(np.fft.fftn(img[None] * kernel[None] * 2.0, axes=(1, 2)), axes=(1, 2))
    return np.sum(blurred**2) + np.sum(np.real(cube)) * 0.5


def cumulative_phase(x):
    """A running sum of phasors along an array (``cumsum``), its mean and a matrix product."""
    z = np.exp(1j * x)
    path = np.cumsum(z)
    a = np.outer(z, np.conj(z))
    return np.mean(np.abs(path)) + np.real(np.sum(a @ z)) * 0.1


def real_image_spectrum(img, weights):
    """A real image's half spectrum (``rfft2``, ``rfftn`` on a stack) filtered and brought
    back by ``irfft2`` and ``irfftn`` (even sides, which autograd's rules take)."""
    spectrum = np.fft.rfft2(img) * (weights + 0.5j)
    smooth = np.fft.irfft2(spectrum)
    stack = np.fft.rfftn(img[None] * 2.0 + img[:, None] * 0.5, norm="ortho")
    back = np.fft.irfftn(stack * 1j, norm="ortho")
    power = np.real(stack * np.conj(stack))  # (|stack| ** 2 has no derivative at 0)
    return np.sum(smooth**2) + np.sum(power) * 0.1 + np.sum(back * back[::-1])


# -- transforms of other lengths and shapes: odd lengths and s= (central differences) --------


def irfft_of_other_lengths(h):
    """``irfft`` with ``n=``: odd and even, more and fewer points than the default. (Here
    and below, ``np.real(z * np.conj(z))`` for ``|z| ** 2``, which has a derivative at 0.)"""
    c = np.fft.rfft(h) * (1.0 + 0.5j)
    odd = np.fft.irfft(c, n=5)
    longer = np.fft.irfft(c * 1j, n=11, norm="ortho")
    even = np.fft.irfft(c, n=4, norm="forward")
    return np.sum(odd * np.cos(np.arange(5.0))) + np.sum(longer**2) + np.sum(even**3)


def irfft_of_a_real_array(h):
    """numpy reads a real array as the coefficients' real parts."""
    square = np.fft.irfftn(h[None] * h[:, None])
    return np.sum(np.fft.irfft(h, n=7) * np.arange(7.0)) + np.sum(square * square[::-1])


def transforms_with_s(x):
    """``fft2``, ``ifft2``, ``fftn``, ``ifftn`` padding and cutting by ``s=`` (and ``-1``:
    the input's length)."""
    a = np.fft.fft2(x, s=(3, 6))
    b = np.fft.ifftn(x + 0.5j * x**2, s=(2, -1), axes=(0, 1), norm="forward")
    c = np.fft.fftn(x, s=(2, 7), axes=(1, 0))
    d = np.fft.ifft2(x * 1j, s=(5, 2), norm="ortho")
    weights = np.cos(np.arange(18.0)).reshape(3, 6)
    return (
        np.sum(np.real(a * np.conj(a)) * weights)
        + np.sum(np.real(b) * np.imag(b))
        + np.sum(np.real(c * np.conj(c)))
        + np.sum(np.real(d) ** 3)
    )


def real_transforms_of_odd_shapes(x):
    """``rfft2``, ``rfftn``, ``irfft2``, ``irfftn`` of odd sides, with and without ``s=``
    (axes repeated too: numpy then transforms along one axis twice)."""
    a = np.fft.rfft2(x)
    b = np.fft.rfftn(x, s=(5, 3), axes=(0, 1))
    c = np.fft.irfft2(np.fft.fft2(x) * (0.5 + 1j))
    d = np.fft.irfftn(np.fft.fftn(x)[:, :2] * 1j, s=(4, 5), axes=(0, 1))
    e = np.fft.rfftn(x, axes=(0, 0))
    weights = np.cos(np.arange(c.size)).reshape(c.shape)
    return (
        np.sum(np.real(a) * np.sin(np.arange(a.size)).reshape(a.shape))
        + np.sum(np.imag(a) ** 2)
        + np.sum(np.real(b) ** 2 - np.imag(b) * 0.3)
        + np.sum(c * weights)
        + np.sum(d**2)
        + np.sum(np.real(e * np.conj(e))) * 0.1
    )
