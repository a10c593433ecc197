"""Complex numbers: which rules hold for complex operands, and the rules of the functions
that take complex numbers apart (``np.real``, ``np.imag``, ``np.conj``, ``np.abs``,
``np.angle`` and the attributes and methods that spell them).

The convention is autograd's (JAX's is the same): the adjoint ``z_bar`` of a complex
value ``z`` is the one with ``dL = Re(z_bar * dz)`` for the real ``L`` differentiated,
that is ``z_bar = dL/dx - 1j * dL/dy`` for ``z = x + 1j * y``. Then:

- a holomorphic function ``w = f(z)`` sends ``w_bar`` back as ``w_bar * f'(z)``, the
  template it has for real numbers, with no conjugate; the forward rule is
  ``f'(z) * z_dot``, also as for real numbers. So every rule whose templates are
  holomorphic expressions of their operands (arithmetic, ``exp``, ``sin``, sums,
  indexing, ``@``...) holds for complex operands unchanged: :data:`HOLOMORPHIC` lists
  them, each template read for it;
- a real operand of a complex operation takes the real part of what its template gives
  (the reverse sweep wraps it in ``np.real``; forward mode needs nothing);
- the functions that are not holomorphic have rules of their own for complex operands
  (:data:`COMPLEX_RULES`)::

      np.real(z)    forward  np.real(g)                    reverse  g + 0j
      np.imag(z)             np.imag(g)                             -1j * g
      np.conj(z)             np.conj(g)                             np.conj(g)
      np.abs(z)              np.real(np.conj(z) * g) / ans          g * np.conj(z) / ans
      np.angle(z)            np.imag(np.conj(z) * g) / abs(z)**2    -1j * g * np.conj(z) / abs(z)**2

  (``g + 0j``: the adjoint of a complex value stays complex where its first part is
  real). ``abs`` and ``angle`` have no derivative at 0, as ``sqrt`` has none there.

Every other rule meeting a complex value is refused at the user's line
(:func:`srcgrad.compiler.analyze.checks.check_facts`): a rule is listed here only once
its templates have been read for complex numbers.

For real operands ``np.real`` is the identity, ``np.imag`` and ``np.angle`` are
piecewise constant, ``np.conj`` is the identity.
"""

from __future__ import annotations

import ast
import builtins

import numpy as np

from . import RULES, Rule
from .builders import _max_rank, elementwise, nondiff

#: rules for complex operands where they differ from those for real ones (same keys)
COMPLEX_RULES: dict[object, Rule] = {}


def _both(keys: list, name: str, real: str | None, complex_jvp: str, complex_vjp: str) -> None:
    """``keys`` differentiated as ``real`` (a template of both modes, or None: piecewise
    constant) on real operands, and with ``complex_jvp``/``complex_vjp`` on complex ones."""
    if real is None:
        nondiff(keys, rank=_max_rank)
    else:
        elementwise(keys, ("x",), {"x": real})
    rule = Rule(
        name=name,
        params=("x",),
        jvp={"x": complex_jvp},
        vjp={"x": complex_vjp},
        elementwise=True,
        rank=_max_rank,
        complex_ok=True,
    )
    for key in keys:
        RULES[key].complex_ok = True
        COMPLEX_RULES[key] = rule


#: rules whose templates hold for complex operands as written (see the module's
#: docstring): holomorphic elementwise functions, linear maps, products
HOLOMORPHIC = [
    ast.Add,
    np.add,
    ast.Sub,
    np.subtract,
    ast.Mult,
    np.multiply,
    ast.Div,
    np.divide,
    ast.USub,
    np.negative,
    ast.UAdd,
    np.positive,
    "copy",
    "getitem",
    ("method", "pop"),
    np.exp,
    np.log,
    np.sqrt,
    np.sin,
    np.cos,
    np.tanh,
    np.sinh,
    np.cosh,
    np.tan,
    np.reciprocal,
    np.expm1,
    np.log1p,
    np.log2,
    np.log10,
    np.square,
    np.sum,
    ("method", "sum"),
    np.mean,
    ("method", "mean"),
    np.cumsum,
    np.flip,
    np.roll,
    ast.Pow,
    np.power,
    ast.MatMult,
    np.matmul,
    np.dot,
    ("method", "dot"),
    np.outer,
    np.transpose,
    ("method", "transpose"),
    ("attr", "T"),
    np.reshape,
    ("method", "reshape"),
    np.ravel,
    ("method", "ravel"),
    np.expand_dims,
    np.squeeze,
    np.broadcast_to,
    np.full_like,
    np.zeros_like,
    np.ones_like,
    np.fft.fft,
    np.fft.ifft,
    np.fft.fft2,
    np.fft.ifft2,
    np.fft.fftn,
    np.fft.ifftn,
    np.fft.rfft,
    np.fft.irfft,
    np.fft.rfft2,
    np.fft.rfftn,
    np.fft.irfft2,
    np.fft.irfftn,
    np.fft.fftshift,
    np.fft.ifftshift,
    # srcgrad's helpers that generated code (differentiated again) calls: linear maps
    *(
        ("helper", name)
        for name in (
            "unbroadcast",
            "unbroadcast_to",
            "broadcast_like",
            "unreduce",
            "matmul_vjp_a",
            "matmul_vjp_b",
            "dot_vjp_a",
            "dot_vjp_b",
            "index_adjoint",
            "index_adjoint_add",
            "rfft_adjoint",
            "irfft_adjoint",
            "fftn_adjoint",
            "resized_like",
            "cumsum_vjp",
            "zero_adjoint",
            "zeros_seq",
            "add_seq",
        )
    ),
]


def mark_rules() -> None:
    """Register the rules for complex operands and mark the holomorphic ones (called
    once every module of :mod:`srcgrad.rules` has registered its own)."""
    _both([np.real, ("attr", "real")], "np.real", "g", "np.real(g)", "g + 0j")
    _both([np.imag, ("attr", "imag")], "np.imag", None, "np.imag(g)", "-1j * g")
    _both(
        [np.conj, np.conjugate, ("method", "conj"), ("method", "conjugate")],
        "np.conj",
        "g",
        "np.conj(g)",
        "np.conj(g)",
    )
    _both(
        [np.angle],
        "np.angle",
        None,
        "np.imag(np.conj(x) * g) / np.abs(x) ** 2",
        "-1j * g * np.conj(x) / np.abs(x) ** 2",
    )
    _both(
        [np.abs, np.absolute, builtins.abs],
        "np.abs",
        "g * np.sign(x)",
        "np.real(np.conj(x) * g) / ans",
        "g * np.conj(x) / ans",
    )
    for key in HOLOMORPHIC:
        RULES[key].complex_ok = True
