"""A two-layer perceptron on scikit-learn's handwritten digits, trained with srcgrad.

Run:  python examples/mlp_digits.py [--quick] [--out DIR]

The digits data set (1797 8x8 images, ten classes) ships inside scikit-learn.
The network is plain numpy, its parameters a dict ``{"W1", "b1", "W2", "b2"}``;
``srcgrad.value_and_grad(loss)(params, X, Y)`` returns the loss and a dict of
gradients with the same keys, and Adam (written out in numpy below) updates
the parameters from minibatches. A tqdm bar shows the epochs. The full run
reaches at least 95% test accuracy; the loss curve goes to
DIR/mlp_digits_loss.png. ``--quick`` trains two epochs (the test suite's smoke
run).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

import srcgrad  # noqa: E402


def logits(params, X):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, X, Y):
    """Mean softmax cross-entropy of the network on images X with one-hot labels Y."""
    z = logits(params, X)
    m = np.max(z, axis=1, keepdims=True)  # log-sum-exp, shifted so exp cannot overflow
    lse = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * (z - lse), axis=1))


#: the loss and its gradient: a dict shaped like params
loss_and_grad = srcgrad.value_and_grad(loss)


def init(rng, n_in, n_hidden, n_out):
    return {
        "W1": rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in),
        "b1": np.zeros(n_hidden),
        "W2": rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden),
        "b2": np.zeros(n_out),
    }


class Adam:
    """Adam (Kingma and Ba, 2015) over a dict of arrays."""

    def __init__(self, params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params, grads):
        self.t += 1
        new = {}
        for k in params:
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * grads[k]
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * grads[k] ** 2
            m_hat = self.m[k] / (1 - self.beta1**self.t)
            v_hat = self.v[k] / (1 - self.beta2**self.t)
            new[k] = params[k] - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
        return new


def accuracy(params, X, labels):
    return float(np.mean(np.argmax(logits(params, X), axis=1) == labels))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two epochs only (smoke test)")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: here)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    epochs = args.epochs or (2 if args.quick else 40)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    digits = load_digits()
    X = digits.data / 16.0  # pixel intensities 0..16
    X_train, X_test, y_train, y_test = train_test_split(
        X, digits.target, test_size=0.25, random_state=0, stratify=digits.target
    )
    Y_train = np.eye(10)[y_train]  # one-hot
    print(f"digits: {len(X_train)} training and {len(X_test)} test images of 8x8 pixels")

    rng = np.random.default_rng(0)
    params = init(rng, X.shape[1], args.hidden, 10)
    optimizer = Adam(params, lr=3e-3)
    losses = []  # the mean training loss of each epoch
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc="epochs", unit="epoch")
    for _ in bar:
        order = rng.permutation(len(X_train))
        batch_losses = []
        for i in range(0, len(order), args.batch):
            batch = order[i : i + args.batch]
            value, grads = loss_and_grad(params, X_train[batch], Y_train[batch])
            params = optimizer.step(params, grads)
            batch_losses.append(value)
        losses.append(float(np.mean(batch_losses)))
        bar.set_postfix(loss=f"{losses[-1]:.4f}")
    seconds = time.perf_counter() - start

    test_acc = accuracy(params, X_test, y_test)
    print(f"{epochs} epochs in {seconds:.1f} s; final training loss {losses[-1]:.4f}")
    print(
        f"training accuracy {accuracy(params, X_train, y_train):.3f}, test accuracy {test_acc:.3f}"
    )

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, epochs + 1), losses, marker="o", markersize=3)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training cross-entropy")
    ax.set_yscale("log")
    ax.set_title(f"MLP on digits (test accuracy {test_acc:.1%})")
    fig.tight_layout()
    path = out / "mlp_digits_loss.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve: {path}")
    if not args.quick:
        assert test_acc >= 0.95, f"test accuracy {test_acc:.3f} is below 95%"
    return {"test_accuracy": test_acc, "loss": losses[-1]}


if __name__ == "__main__":
    main()
