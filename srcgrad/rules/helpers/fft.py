"""Runtime helpers of the rules for ``numpy.fft`` (``srcgrad/rules/fft.py``): the
adjoints of the real transforms, which are not the transform itself.

Adjoints follow the convention of :mod:`srcgrad.rules.complex_numbers`
(``dL = Re(z_bar * dz)``). Both helpers are linear in ``g``; like every helper, each is
copied as source into the generated module, so it reads no module-level name but
``np``."""

import numpy as np


def rfft_adjoint(g, x, axis, norm):
    """The adjoint of ``np.fft.rfft(x, axis=axis, norm=norm)``: the rows of the DFT it
    keeps, transposed, are the full DFT of ``g`` padded with zeros to ``x``'s length
    (the DFT matrix is symmetric); its real part is taken for the real ``x``."""
    return np.fft.fft(g, n=np.shape(x)[axis], axis=axis, norm=norm)


def irfft_adjoint(g, axis, norm):
    """The adjoint of ``np.fft.irfft(c, axis=axis, norm=norm)`` (output of even length
    ``n``, the default): ``irfft`` reads the Hermitian extension of ``c``, so each
    coefficient but the first and the last counts twice; those two count once, by
    their real part. With ``F`` the DFT, ``c_bar = w * conj(rfft(g)) / n`` for
    ``norm=None``, ``w = [1, 2, ..., 2, 1]``; the dual normalization gives the others."""
    dual = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    c = np.conj(np.fft.rfft(g, axis=axis, norm=dual[norm]))
    m = np.shape(c)[axis]
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    weights[-1] = 1.0
    shape = [1] * np.ndim(c)
    shape[axis] = m
    return c * np.reshape(weights, shape)
