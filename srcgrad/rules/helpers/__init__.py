"""Runtime helpers that belong to one family of rules, beside those rules.

Generated code calls them by name, like the generic helpers of :mod:`srcgrad.runtime`;
:data:`srcgrad.compiler.transform.builder.HELPERS` lists both."""

from . import elementwise, linalg, numeric, reductions, shapes

MODULES = (elementwise, reductions, linalg, shapes, numeric)
