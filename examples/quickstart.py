"""srcgrad in one screen: differentiate a logistic-regression loss.

Run:  python examples/quickstart.py

It prints the gradient code srcgrad generated, the gradient, and checks the
gradient against central finite differences.
"""

import numpy as np

import srcgrad


@srcgrad.grad  # reverse mode, gradient with respect to the first argument, w
def loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 5))
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) > 0).astype(float)
    w = 0.1 * rng.standard_normal(5)

    g = loss(w, x, y)
    print("Generated gradient code (loss.source):\n")
    print(loss.source)
    print("gradient:", g)

    # check it against central finite differences of the original function
    f = loss.__wrapped__
    eps = 1e-6
    numeric = np.array(
        [(f(w + eps * e, x, y) - f(w - eps * e, x, y)) / (2 * eps) for e in np.eye(5)]
    )
    error = np.max(np.abs(g - numeric))
    print(f"largest difference from finite differences: {error:.2e}")
    assert error < 1e-6, "gradient does not match finite differences"


if __name__ == "__main__":
    main()
