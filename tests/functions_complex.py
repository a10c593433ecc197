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
