"""Logistic regression on the breast cancer data set, trained with srcgrad gradients.

Run:  python examples/logistic_regression.py [--quick] [--out DIR]

The data set (569 tumours, 30 features each, benign or malignant) ships inside
scikit-learn, so nothing is downloaded. The features are standardised with the
training set's mean and standard deviation, the weights are fitted by plain
gradient descent on the mean log loss (with a small L2 penalty), and the test
accuracy is printed. The loss curve goes to DIR/logistic_regression_loss.png.
``--quick`` runs a few steps only (the test suite's smoke run).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FormatStrFormatter, NullFormatter  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import srcgrad  # noqa: E402


def loss(w, b, X, y, l2):
    """Mean log loss of the logistic model p = sigmoid(X @ w + b), plus l2 * |w|^2.

    log(1 + exp(z)) - y z is the log loss written so that it never overflows."""
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z) + l2 * np.sum(w * w)


#: the loss and its gradient with respect to w and b, from one generated function
loss_and_grad = srcgrad.value_and_grad(loss, wrt=("w", "b"))


def accuracy(w, b, X, y):
    return float(np.mean((X @ w + b > 0) == (y == 1)))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps only (smoke test)")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: here)")
    parser.add_argument("--steps", type=int, default=None, help="gradient descent steps")
    args = parser.parse_args(argv)
    steps = args.steps or (20 if args.quick else 1000)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target.astype(float), test_size=0.25, random_state=0, stratify=data.target
    )
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    X_train = (X_train - mean) / std
    X_test = (X_test - mean) / std
    print(
        f"breast cancer: {len(X_train)} training and {len(X_test)} test samples, "
        f"{X_train.shape[1]} features"
    )

    w = np.zeros(X_train.shape[1])
    b = 0.0
    learning_rate, l2 = 0.5, 3e-3
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        value, (w_bar, b_bar) = loss_and_grad(w, b, X_train, y_train, l2)
        w = w - learning_rate * w_bar
        b = b - learning_rate * b_bar
        losses.append(value)
        if step % max(1, steps // 10) == 0 or step == steps - 1:
            print(f"step {step:5d}  loss {value:.4f}")
    seconds = time.perf_counter() - start

    train_acc = accuracy(w, b, X_train, y_train)
    test_acc = accuracy(w, b, X_test, y_test)
    print(f"{steps} steps in {seconds:.2f} s; final training loss {losses[-1]:.4f}")
    print(f"training accuracy {train_acc:.3f}, test accuracy {test_acc:.3f}")

    fig, ax = plt.subplots(figsize=(6, 4))
    # a log step axis: the loss falls in the first hundred steps and then settles, and
    # on a linear axis that fall takes a tenth of the plot
    ax.plot(np.arange(1, steps + 1), losses)
    ax.set_xscale("log")
    ax.set_xlabel("gradient descent step (log scale)")
    ax.set_ylabel("training log loss")
    ax.set_yscale("log")
    # plain numbers on the loss axis, not powers of ten
    ax.set_yticks([0.08, 0.1, 0.2, 0.4, 0.7])
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.2g"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"Logistic regression (test accuracy {test_acc:.1%})")
    fig.tight_layout()
    path = out / "logistic_regression_loss.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve: {path}")
    if not args.quick:
        assert test_acc > 0.95, f"test accuracy {test_acc:.3f}"
    return {"test_accuracy": test_acc, "loss": losses[-1]}


if __name__ == "__main__":
    main()
