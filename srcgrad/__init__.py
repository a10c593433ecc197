"""srcgrad: automatic differentiation of numpy code by source transformation.

A transformation reads a plain numpy-style Python function and writes its
derivative as new, readable Python source (``.source``), in forward mode
(a tangent beside every value) or reverse mode (a primal sweep, then the
adjoint statements in reverse order)::

    import numpy as np
    import srcgrad

    @srcgrad.grad
    def loss(w, x, y):
        p = 1 / (1 + np.exp(-(x @ w)))
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

    g = loss(w, x, y)      # the gradient with respect to w
    print(loss.source)     # the code that computed it
"""

from .api import grad, jvp, show, value_and_grad, vjp
from .compiled import CompileWarning
from .custom import Primitive, primitive, stop_gradient
from .derivative import Derivative
from .errors import CompileError, NoDerivativeError, SrcgradError, UnsupportedSyntaxError
from .export import export
from .jacobians import Jacobian, elementwise_grad, hessian, hvp, jacfwd, jacobian, jacrev
from .pytree import tree_leaves, tree_map

__version__ = "0.1.0"

__all__ = [
    "CompileError",
    "CompileWarning",
    "Derivative",
    "Jacobian",
    "Primitive",
    "NoDerivativeError",
    "SrcgradError",
    "UnsupportedSyntaxError",
    "elementwise_grad",
    "export",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "primitive",
    "show",
    "stop_gradient",
    "tree_leaves",
    "tree_map",
    "value_and_grad",
    "vjp",
]
