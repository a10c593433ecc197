"""Differentiating recursive functions: Horner's rule and a divide-and-conquer sum.

Run:  python examples/recursion.py

srcgrad differentiates a function that calls itself by giving it a pair of
generated functions: an augmented primal ``f_fwd`` (the value, and a record
of what the adjoint needs) and an adjoint ``f_bwd`` (the record and the
output's adjoint in, the arguments' adjoints out). Each calls itself
recursively, as the original does, so the recursion depth of the derivative
is that of the function. This script prints those pairs for two recursive
functions and checks their gradients with ``srcgrad.testing.check_grads``
(reverse mode, forward mode and central finite differences).
"""

from __future__ import annotations

import argparse
import re

import numpy as np

import srcgrad
from srcgrad.testing import check_grads


def horner(c, x):
    """The polynomial c[0] + c[1] x + c[2] x^2 + ... at x, by Horner's rule, recursively."""
    if c.shape[0] == 1:
        return c[0] + 0.0 * x
    return c[0] + x * horner(c[1:], x)


def fit_error(c, x, y):
    """Squared error of the polynomial with coefficients c on the points (x, y)."""
    return np.sum((horner(c, x) - y) ** 2)


def tree_energy(v):
    """A binary tree's sum of sin(v_i) * v_i, split in halves down to the leaves."""
    n = v.shape[0]
    if n == 1:
        return np.sin(v[0]) * v[0]
    half = n // 2
    return tree_energy(v[:half]) + tree_energy(v[half:])


def generated_pair(source: str, name: str) -> str:
    """The ``name_fwd`` and ``name_bwd`` functions of a generated module."""
    pieces = re.split(r"\n(?=def )", source)
    return "\n".join(p for p in pieces if p.startswith((f"def {name}_fwd", f"def {name}_bwd")))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # accepted like the other examples' options; this one is quick and writes no files
    parser.add_argument("--quick", action="store_true", help="no effect: it is quick anyway")
    parser.add_argument("--out", default=".", help="no effect: it writes no files")
    parser.parse_args(argv)
    np.set_printoptions(precision=4, suppress=True)
    rng = np.random.default_rng(0)

    c = np.array([0.5, -1.0, 2.0, 0.3])
    x = np.linspace(-1.0, 1.0, 9)
    y = np.cos(2 * x)
    d_fit = srcgrad.grad(fit_error, wrt=("c", "x"))
    c_bar, x_bar = d_fit(c, x, y)
    print("fit_error(c, x, y) =", fit_error(c, x, y))
    print("d/dc:", c_bar)
    print("d/dx:", x_bar)
    print("\nThe generated pair for horner (from srcgrad.grad(fit_error).source):\n")
    print(generated_pair(d_fit.source, "horner"))
    check_grads(fit_error, (c, x, y), wrt=(0, 1))
    print("check_grads(fit_error, wrt=(c, x)): reverse, forward and finite differences agree\n")

    v = rng.standard_normal(11)
    d_tree = srcgrad.grad(tree_energy)
    g = d_tree(v)
    expected = np.sin(v) + v * np.cos(v)  # the derivative of each leaf's sin(v) v
    print("tree_energy(v) =", tree_energy(v))
    print("largest difference from the hand-written gradient:", np.max(np.abs(g - expected)))
    print("\nThe generated pair for tree_energy (two recursive calls per node):\n")
    print(generated_pair(d_tree.source, "tree_energy"))
    check_grads(tree_energy, (v,))
    print("check_grads(tree_energy): reverse, forward and finite differences agree")
    assert np.allclose(g, expected)
    return {"c_bar": c_bar, "tree_grad": g}


if __name__ == "__main__":
    main()
