"""Rules for ``numpy.fft``: the complex transforms, the real ones and the shifts.

Every transform is linear, so its forward rule is the transform of the tangent. The
adjoints follow the convention of :mod:`.complex_numbers` (``dL = Re(z_bar * dz)``):

- ``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn``, ``ifftn``: the DFT matrix is
  symmetric (``F[j, k] = exp(-2j pi j k / n)``), and so is every normalization of it and
  of its inverse, along any axes: the adjoint is the same transform of ``g``;
- ``rfft`` (of a real array): the rows of the DFT it keeps, transposed: the full DFT
  of ``g`` padded to the input's length, whose real part the real input takes
  (``rfft_adjoint``);
- ``irfft`` (output of any length ``n``): ``irfft_adjoint``, the weighted conjugate
  ``rfft`` of ``g`` (``srcgrad/rules/helpers/fft.py`` says why);
- ``rfft2``, ``rfftn`` (of a real array), ``irfft2``, ``irfftn``: numpy makes them of
  1-d transforms (``rfft`` along the last of ``axes``, then ``fft`` along the others;
  ``ifft`` along the others, then ``irfft``), and ``fftn_adjoint`` applies the adjoints
  of those in reverse order;
- ``fftshift`` and ``ifftshift``: permutations, each the other's adjoint.

``n=`` (``fft``, ``ifft``, ``rfft``, ``irfft``) and ``s=`` (the n-d transforms) pad or
cut the input along the axes first: the adjoint cuts or pads back (``resized_like``,
``fftn_adjoint``, which follows numpy's reading of ``s`` and ``axes``). ``out=`` must
stay None; ``norm=`` is passed on (numpy refuses an unknown one).
"""

from __future__ import annotations

import numpy as np

from . import Context, Rule, linear, register


def _rank(ctx: Context) -> int | None:
    return ctx.rank("a") if "a" in ctx.rule.params else ctx.rank("x")


_ONE_AXIS = dict(
    params=("a", "n", "axis", "norm", "out"),
    defaults={"n": None, "axis": -1, "norm": None, "out": None},
    fixed={"out": None},
    rank=_rank,
    complex_ok=True,
)


def _resized_vjp(ctx: Context) -> str:
    """The adjoint of ``fft``/``ifft`` with ``n``: the input padded or cut to ``n`` (``P``),
    then the symmetric transform: ``P' F' g`` is the transform of ``g`` cut or padded
    back to the input's length along ``axis``."""
    if ctx.is_static("n") and ctx.static("n") is None:
        return linear(ctx)
    return f"resized_like(np.fft.{ctx.rule.name.split('.')[-1]}(g, axis=axis, norm=norm), a, axis)"


def _nd_vjp(kind: str):
    """The adjoint of an n-d transform (``kind`` as ``fftn_adjoint`` reads it): for
    ``fftn`` and ``ifftn`` without ``s``, the same transform of ``g``."""

    def template(ctx: Context) -> str:
        if kind in ("fft", "ifft") and ctx.is_static("s") and ctx.static("s") is None:
            return linear(ctx)
        return f"fftn_adjoint(g, a, s, axes, norm, {kind!r})"

    return template


_AXES = dict(
    params=("a", "s", "axes", "norm", "out"),
    defaults={"s": None, "norm": None, "out": None},
    fixed={"out": None},
    rank=_rank,
    complex_ok=True,
)
_TWO = {**_AXES, "defaults": {**_AXES["defaults"], "axes": (-2, -1)}}
_ALL = {**_AXES, "defaults": {**_AXES["defaults"], "axes": None}}

for _f in (np.fft.fft, np.fft.ifft):
    _name = f"np.fft.{_f.__name__}"
    register(_f, Rule(name=_name, jvp={"a": linear}, vjp={"a": _resized_vjp}, **_ONE_AXIS))
for _f, _kind, _extra in (
    (np.fft.fft2, "fft", _TWO),
    (np.fft.ifft2, "ifft", _TWO),
    (np.fft.fftn, "fft", _ALL),
    (np.fft.ifftn, "ifft", _ALL),
    (np.fft.rfft2, "rfft", _TWO),
    (np.fft.rfftn, "rfft", _ALL),
    (np.fft.irfft2, "irfft", _TWO),
    (np.fft.irfftn, "irfft", _ALL),
):
    _name = f"np.fft.{_f.__name__}"
    register(_f, Rule(name=_name, jvp={"a": linear}, vjp={"a": _nd_vjp(_kind)}, **_extra))
register(
    np.fft.rfft,
    Rule(
        name="np.fft.rfft",
        jvp={"a": linear},
        vjp={"a": "rfft_adjoint(g, a, n, axis, norm)"},
        **_ONE_AXIS,
    ),
)
register(
    np.fft.irfft,
    Rule(
        name="np.fft.irfft",
        jvp={"a": linear},
        vjp={"a": "irfft_adjoint(g, a, axis, norm)"},
        **_ONE_AXIS,
    ),
)
for _f, _inverse in ((np.fft.fftshift, "ifftshift"), (np.fft.ifftshift, "fftshift")):
    register(
        _f,
        Rule(
            name=f"np.fft.{_f.__name__}",
            params=("x", "axes"),
            defaults={"axes": None},
            jvp={"x": linear},
            vjp={"x": f"np.fft.{_inverse}(g, axes)"},
            rank=_rank,
            complex_ok=True,
        ),
    )

#: the transforms that take real arrays only (numpy drops a complex input's imaginary part)
REAL_INPUT = frozenset({"np.fft.rfft", "np.fft.rfft2", "np.fft.rfftn"})
#: the transforms of a real output whose adjoint is complex: a real input (numpy reads it
#: as complex) takes its real part
COMPLEX_ADJOINT = frozenset({"np.fft.irfft", "np.fft.irfft2", "np.fft.irfftn"})
