"""Runtime helpers of the rules for ``numpy.fft`` (``srcgrad/rules/fft.py``): the
adjoints of the real transforms, which are not the transform itself, and of the n-d
transforms with ``s=``.

Adjoints follow the convention of :mod:`srcgrad.rules.complex_numbers`
(``dL = Re(z_bar * dz)``). Every helper is linear in ``g``; like every helper, each is
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
    return _resized(v, np.shape(x)[axis], axis)


def _resized(v, want, axis):
    """``v`` cut or padded with zeros along ``axis`` to ``want`` elements."""
    have = np.shape(v)[axis]
    if want == have:
        return v
    if want < have:
        return np.take(v, np.arange(want), axis=axis)
    pad = [(0, 0)] * np.ndim(v)
    pad[axis] = (0, want - have)
    return np.pad(v, pad)


def irfft_adjoint(g, c, axis, norm):
    """The adjoint of ``np.fft.irfft(c, n, axis=axis, norm=norm)`` (``g`` of the output's
    length ``n``): see ``_irfft_coefficients_adjoint``, cut or padded back to ``c``'s
    length (numpy cuts or pads ``c`` to ``n // 2 + 1`` coefficients first)."""
    return _resized(_irfft_coefficients_adjoint(g, axis, norm), np.shape(c)[axis], axis)


def _irfft_coefficients_adjoint(g, axis, norm):
    """The adjoint of ``irfft``'s ``n // 2 + 1`` coefficients, ``n`` the length of ``g``
    along ``axis``: ``irfft`` reads the Hermitian extension of them, so each coefficient
    counts twice but the first (and, for an even ``n``, the last), which counts once, by
    its real part. With ``F`` the DFT, ``c_bar = w * conj(rfft(g)) / n`` for
    ``norm=None``, ``w = [1, 2, ..., 2, 1]`` (``[1, 2, ..., 2]`` for an odd ``n``); the
    dual normalization gives the others."""
    dual = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    c = np.conj(np.fft.rfft(g, axis=axis, norm=dual[norm]))
    m = np.shape(c)[axis]
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if np.shape(g)[axis] % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * np.ndim(c)
    shape[axis] = m
    return c * np.reshape(weights, shape)


def _fft_plan(shape, s, axes, kind):
    """The 1-d transforms numpy's n-d transform makes of an array of ``shape``, in the
    order it makes them, as ``(name, n, axis)``: ``kind`` ``"fft"`` and ``"ifft"`` for
    ``fftn`` and ``ifftn`` (and ``fft2``, ``ifft2``), ``"rfft"`` for ``rfftn``,
    ``"irfft"`` for ``irfftn`` (numpy.fft's ``_cook_nd_args`` and loops)."""
    if s is None:
        axes = list(range(-len(shape), 0)) if axes is None else list(axes)
        lengths = [shape[a] for a in axes]
        if kind == "irfft":
            lengths[-1] = (shape[axes[-1]] - 1) * 2
    else:
        axes = list(range(-len(s), 0)) if axes is None else list(axes)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        lengths = [shape[a] if n == -1 else n for n, a in zip(s, axes)]
    steps = list(zip(lengths, axes))
    if kind in ("fft", "ifft"):
        return [(kind, n, a) for n, a in reversed(steps)]
    if kind == "rfft":
        return [("rfft", *steps[-1])] + [("fft", n, a) for n, a in reversed(steps[:-1])]
    return [("ifft", n, a) for n, a in steps[:-1]] + [("irfft", *steps[-1])]


def fftn_adjoint(g, a, s, axes, norm, kind):
    """The adjoint of numpy's n-d transform ``kind`` (see ``_fft_plan``) of ``a`` with
    ``s``, ``axes`` and ``norm``: the adjoints of its 1-d transforms in reverse order,
    each cut or padded back to the length its input had (``fft`` and ``ifft`` are
    symmetric; ``rfft`` and ``irfft``: as ``rfft_adjoint`` and ``irfft_adjoint``)."""
    steps = _fft_plan(np.shape(a), s, axes, kind)
    shape = list(np.shape(a))
    lengths = []
    for name, n, axis in steps:  # the length along axis before each step, and made
        m = shape[axis]
        length = (2 * (m - 1) if name == "irfft" else m) if n is None else n
        lengths.append((m, length))
        shape[axis] = length // 2 + 1 if name == "rfft" else length
    for (name, _, axis), (m, length) in zip(reversed(steps), reversed(lengths)):
        if name == "rfft":
            g = np.fft.fft(g, n=length, axis=axis, norm=norm)
        elif name == "irfft":
            g = _irfft_coefficients_adjoint(g, axis, norm)
        elif name == "fft":
            g = np.fft.fft(g, axis=axis, norm=norm)
        else:
            g = np.fft.ifft(g, axis=axis, norm=norm)
        g = _resized(g, m, axis)
    return g
