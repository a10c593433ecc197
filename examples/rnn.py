"""A tanh recurrent network learns the sign of a running sum, trained with srcgrad.

Run:  python examples/rnn.py [--quick] [--out DIR]

Each input sequence is T random numbers; at every step the network must say
whether the sum so far is positive, so it has to carry the running sum in its
hidden state. The loss loops over the time steps in plain Python; srcgrad's
reverse mode turns that loop into a forward sweep that records what it
overwrites, then a loop run backwards (backpropagation through time). The
script prints that generated backward loop, trains the network with Adam and
prints the per-step accuracy on new sequences. The loss curve goes to
DIR/rnn_loss.png. ``--quick`` trains a few steps (the test suite's smoke run).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad  # noqa: E402


def loss(Wh, Wx, b, Wy, by, xs, ys):
    """Mean logistic loss of the RNN's prediction at every step.

    xs: (T, batch, 1) inputs; ys: (T, batch, 1) targets in {0, 1}."""
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        z = h @ Wy + by
        total = total + np.mean(np.logaddexp(0.0, z) - ys[t] * z)
    return total / xs.shape[0]


def predict(params, xs):
    Wh, Wx, b, Wy, by = params
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    out = []
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx + b)
        out.append(h @ Wy + by > 0)
    return np.array(out)


#: the loss and its gradients with respect to the five weight arrays
loss_and_grad = srcgrad.value_and_grad(loss, wrt=(0, 1, 2, 3, 4))


def batch(rng, steps, size):
    xs = rng.standard_normal((steps, size, 1))
    ys = (np.cumsum(xs, axis=0) > 0).astype(float)
    return xs, ys


def backward_loop(source: str) -> str:
    """The generated gradient function (the part of the module from ``def ...grad_``)."""
    start = source.index("def value_and_grad_") if "def value_and_grad_" in source else None
    if start is None:
        start = source.index("def grad_")
    return source[start:]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps only (smoke test)")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: here)")
    parser.add_argument("--steps", type=int, default=None, help="training steps")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--length", type=int, default=20, help="sequence length T")
    args = parser.parse_args(argv)
    steps = args.steps or (10 if args.quick else 1500)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(0)
    n = args.hidden
    params = [
        0.5 * rng.standard_normal((n, n)) / np.sqrt(n),  # Wh
        rng.standard_normal((1, n)),  # Wx
        np.zeros(n),  # b
        rng.standard_normal((n, 1)) / np.sqrt(n),  # Wy
        np.zeros(1),  # by
    ]
    m = [np.zeros_like(p) for p in params]  # Adam's moments
    v = [np.zeros_like(p) for p in params]
    lr, beta1, beta2 = 1e-2, 0.9, 0.999

    losses = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        xs, ys = batch(rng, args.length, 64)
        value, grads = loss_and_grad(*params, xs, ys)
        if step == 1:
            print("The generated gradient (loss_and_grad.source, from its def):\n")
            print(backward_loop(loss_and_grad.source))
        for i, g in enumerate(grads):
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1**step)
            v_hat = v[i] / (1 - beta2**step)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        losses.append(value)
        if step % max(1, steps // 10) == 0 or step == 1:
            print(f"step {step:5d}  loss {value:.4f}")
    seconds = time.perf_counter() - start

    xs, ys = batch(np.random.default_rng(1), args.length, 2000)
    correct = predict(params, xs) == (ys > 0)
    per_step = correct.mean(axis=(1, 2))
    print(f"{steps} steps in {seconds:.1f} s; final training loss {losses[-1]:.4f}")
    print("test accuracy by time step:", " ".join(f"{a:.2f}" for a in per_step))
    print(f"test accuracy over all steps: {correct.mean():.3f}")

    fig, ax = plt.subplots(figsize=(6, 4))
    # each step's loss is of one small batch, so noisy: drawn faintly, with a running mean
    # on top (of the last fifth of the steps so far, at most 50, so that it keeps up on
    # the log step axis); a log axis, since the loss falls in the first few hundred steps
    steps = np.arange(1, len(losses) + 1)
    totals = np.concatenate([[0.0], np.cumsum(losses)])
    first = steps - np.clip(steps // 5, 1, 50)
    mean = (totals[steps] - totals[first]) / (steps - first)
    ax.plot(steps, losses, linewidth=0.6, alpha=0.35, label="each step")
    ax.plot(steps, mean, linewidth=2.0, color="C0", label="running mean")
    ax.set_xscale("log")
    ax.legend()
    ax.set_xlabel("training step (log scale)")
    ax.set_ylabel("mean logistic loss")
    ax.set_title(f"RNN, sign of the running sum (test accuracy {correct.mean():.1%})")
    fig.tight_layout()
    path = out / "rnn_loss.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve: {path}")
    return {"test_accuracy": float(correct.mean()), "loss": losses[-1]}


if __name__ == "__main__":
    main()
