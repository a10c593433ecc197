"""Runtime helpers that belong to one family of rules, beside those rules.

Generated code calls them by name, like the generic helpers of :mod:`srcgrad.runtime`;
:data:`srcgrad.compiler.transform.builder.HELPERS` lists both."""

from . import elementwise, fft, linalg, numeric, reductions, scipy, shapes

MODULES = (elementwise, reductions, linalg, shapes, fft, scipy, numeric)
