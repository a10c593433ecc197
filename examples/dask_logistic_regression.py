"""Logistic regression on 10 million rows with dask: srcgrad gradients of dask arrays.

Run:  python examples/dask_logistic_regression.py [--rows N] [--workers K] [--quick] [--out DIR]
Needs:  pip install ".[dask,examples]"

The data set (``--rows`` rows of ``--features`` standard normal features, labels from
a fixed linear rule with noise) is a dask array generated lazily, chunk by chunk, from
a seed: no process ever holds all of it, and every epoch regenerates each chunk where
it is used. A ``dask.distributed`` ``LocalCluster`` on this machine (``--workers``
worker processes, one thread each, loopback only) runs gradient descent with momentum
(heavy ball: each step adds ``--momentum`` times the previous one): each
epoch, the srcgrad gradient of the mean log loss is a lazy dask graph (the loss, the
weights' and the bias' gradient from one generated function), computed on the cluster
under dask's progress bar. The loss per epoch, the run time and each worker's peak
memory are printed; the loss curve goes to DIR/dask_logistic_regression_loss.png.
Before training, the same srcgrad gradient on a 1,000-row numpy sample and on that
sample as a dask array are checked to agree. ``--quick``: 100,000 rows, one epoch
(the test suite's smoke run).
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from dask.distributed import Client, LocalCluster, progress  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

import srcgrad  # noqa: E402


def loss(w, b, X, y):
    """Mean log loss of the logistic model p = sigmoid(X @ w + b);
    log(1 + exp(z)) - y z is the log loss written so that it never overflows."""
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


#: the loss and its gradient with respect to w and b, from one generated function
loss_and_grad = srcgrad.value_and_grad(loss, wrt=("w", "b"))


def dataset(rows: int, features: int, chunk_rows: int, seed: int = 0) -> tuple:
    """Features and labels as lazy dask arrays, each chunk generated from the seed."""
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, features), chunks=(chunk_rows, features))
    truth = np.linspace(-1.0, 1.0, features)  # the rule the labels follow
    noise = rng.standard_normal(rows, chunks=chunk_rows)
    y = (X @ truth + 0.5 * noise > 0.25).astype(float)
    return X, y, truth


def peak_rss_mib() -> float:
    """This process's peak resident memory (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def check_against_numpy(X, y, features: int) -> float:
    """The largest difference between the gradient of a 1,000-row sample as numpy
    arrays and as dask arrays (the same generated code, rebound to dask.array)."""
    Xs, ys = dask.compute(X[:1000], y[:1000])
    w = np.full(features, 0.1)
    _, (gw, gb) = loss_and_grad(w, 0.0, Xs, ys)
    _, (lazy_gw, lazy_gb) = loss_and_grad(w, 0.0, da.from_array(Xs, chunks=250), ys)
    assert isinstance(lazy_gw, da.Array) and isinstance(lazy_gb, da.Array)
    lazy_gw, lazy_gb = dask.compute(lazy_gw, lazy_gb)
    return max(float(np.max(np.abs(gw - lazy_gw))), abs(float(gb) - float(lazy_gb)))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="rows (default 10,000,000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=250_000, help="rows per chunk")
    parser.add_argument("--epochs", type=int, default=None, help="gradient steps (default 8)")
    # about 1 / L for the logistic loss of standard normal features (L = 1/4 of the
    # features' largest covariance eigenvalue is 1/4; 2 / L = 8 would diverge)
    parser.add_argument("--lr", type=float, default=6.0, help="step size")
    parser.add_argument("--momentum", type=float, default=0.5, help="heavy-ball momentum")
    parser.add_argument("--quick", action="store_true", help="100,000 rows, one epoch")
    parser.add_argument("--out", default=".", help="folder for the PNG (default: here)")
    args = parser.parse_args(argv)
    rows = args.rows or (100_000 if args.quick else 10_000_000)
    epochs = args.epochs or (1 if args.quick else 8)
    chunk_rows = min(args.chunk_rows, rows)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    X, y, truth = dataset(rows, args.features, chunk_rows)
    chunk_mib = chunk_rows * args.features * 8 / 2**20
    print(
        f"dataset: {rows:,} rows x {args.features} features ({rows * args.features * 8 / 2**30:.2f}"
        f" GiB as float64), {X.numblocks[0]} chunks of {chunk_rows:,} rows ({chunk_mib:.1f} MiB)"
    )
    difference = check_against_numpy(X, y, args.features)
    print(f"numpy and dask gradients of a 1,000-row sample agree (difference {difference:.1e})")
    assert difference < 1e-12

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",  # loopback only
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        w, b = np.zeros(args.features), 0.0
        step_w, step_b = np.zeros(args.features), 0.0
        losses = []
        start = time.perf_counter()
        for epoch in range(1, epochs + 1):
            value, (gw, gb) = loss_and_grad(w, b, X, y)  # lazy: dask arrays, nothing computed
            assert isinstance(gw, da.Array)
            futures = client.compute([value, gw, gb])
            progress(futures)  # dask's progress bar
            value, gw, gb = client.gather(futures)
            losses.append(float(value))
            print(f"epoch {epoch}: loss {float(value):.5f}")
            step_w = args.momentum * step_w - args.lr * gw
            step_b = args.momentum * step_b - args.lr * float(gb)
            w, b = w + step_w, b + step_b
        seconds = time.perf_counter() - start
        peaks = client.run(peak_rss_mib)
    finally:
        client.close()
        cluster.close()

    cosine = float(w @ truth / (np.linalg.norm(w) * np.linalg.norm(truth) + 1e-300))
    print(
        f"trained in {seconds:.1f} s with {args.workers} worker(s): {epochs} epoch(s), "
        f"{rows * epochs / seconds / 1e6:.1f} M rows/s"
    )
    print(f"direction of w against the labelling rule: cosine {cosine:.4f}")
    print(
        "peak memory per worker: "
        + ", ".join(f"{p:.0f} MiB" for p in peaks.values())
        + f" (chunk {chunk_mib:.1f} MiB, data {rows * args.features * 8 / 2**20:,.0f} MiB)"
    )

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole
    ax.set_ylabel("mean log loss")
    ax.set_title(f"logistic regression, {rows:,} rows on dask")
    fig.tight_layout()
    fig.savefig(out / "dask_logistic_regression_loss.png", dpi=100)
    plt.close(fig)
    return {"losses": losses, "seconds": seconds, "peaks": peaks, "cosine": cosine}


if __name__ == "__main__":
    main()
