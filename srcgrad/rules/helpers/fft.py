"""Runtime helpers of the rules for ``numpy.fft`` (``srcgrad/rules/fft.py``): the
adjoints of the real transforms, which are not the transform itself.

Adjoints follow the convention of :mod:`srcgrad.rules.complex_numbers`
(``dL = Re(z_bar * dz)``). Both helpers are linear in ``g``; like every helper, each is
copied as source into the generated module, so it reads no module-level name but
``np``."""

import numpy as np


def rfft_adjoint(g, x, n, axis, norm):
    """The adjoint of ``np.fft.rfft(x, n=n, axis=axis, norm=norm)``: the rows of the DFT
    it keeps, transposed, are the full DFT of ``g`` padded with zeros to the transform's
    length (the DFT matrix is symmetric), cut or padded back to ``x``'s length where
    ``n`` differs from it; its real part is taken for the real ``x``."""
    length = np.shape(x)[axis] if n is None else n
    return resized_like(np.fft.fft(g, n=length, axis=axis, norm=norm), x, axis)


def resized_like(v, x, axis):
    """``v`` cut or padded with zeros along ``axis`` to ``x``'s length there: the
    adjoint of numpy's padding or cutting an input to a transform's length ``n``."""
    want, have = np.shape(x)[axis], np.shape(v)[axis]
    if want == have:
        return v
    if want < have:
        return np.take(v, np.arange(want), axis=axis)
    pad = [(0, 0)] * np.ndim(v)
    pad[axis] = (0, want - have)
    return np.pad(v, pad)


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
