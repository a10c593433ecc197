"""Fit a digital filter to a target frequency response, through ``np.fft``.

Run:  python examples/filter_fit.py [--quick] [--out DIR]

A 15-tap FIR filter ``h`` (real numbers) should pass frequencies below a quarter of the
sampling rate and stop those above. Its frequency response is the FFT of its taps,
padded to 128 points: complex numbers. The loss compares the response's power
``|H|^2`` (``np.real(H * np.conj(H))``) with the target's, and the phase of the
response in the pass band with a linear phase (``np.angle``, a constant delay). srcgrad
differentiates the loss through ``np.fft.rfft``, the complex arithmetic and ``np.angle``
back to the real taps; the gradient is checked against forward mode and finite
differences first, then Adam descends. The fitted and initial responses are printed and
drawn to DIR/filter_fit.png. ``--quick`` runs three iterations (the test suite's smoke
run).
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.testing import check_grads  # noqa: E402

TAPS = 15
POINTS = 128
FREQUENCIES = np.arange(POINTS // 2 + 1) / POINTS  # cycles per sample, 0 to 0.5
TARGET = (FREQUENCIES < 0.25).astype(float)  # the power response wanted
PASS = FREQUENCIES < 0.2  # where the phase should be linear
DELAY = (TAPS - 1) / 2  # the delay of a symmetric filter, in samples


def response(h):
    """The filter's frequency response at POINTS // 2 + 1 frequencies (complex)."""
    return np.fft.rfft(h, n=POINTS)  # (the taps padded with zeros to POINTS)


def loss(h, target, in_pass):
    spectrum = response(h)
    power = np.real(spectrum * np.conj(spectrum))
    shifted = spectrum * np.exp(2j * np.pi * FREQUENCIES * DELAY)  # the delay taken out
    phase = np.angle(shifted) * in_pass
    return np.mean((power - target) ** 2) + 0.01 * np.mean(phase * phase)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three iterations only")
    parser.add_argument("--out", default=".", help="directory for filter_fit.png")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(0)
    h = 0.1 * rng.standard_normal(TAPS) + 0.2 * np.exp(-0.5 * (np.arange(TAPS) - DELAY) ** 2)
    in_pass = PASS.astype(float)
    check_grads(loss, (h, TARGET, in_pass), wrt=0)
    print("check_grads: reverse mode, forward mode and finite differences agree")
    source = srcgrad.grad(loss).source
    start = source.index("def grad_loss")
    print("the gradient, as srcgrad generated it (the complex part):")
    print("\n".join(line for line in source[start:].splitlines() if "spectrum" in line))

    initial = h.copy()
    value_and_grad = srcgrad.value_and_grad(loss)
    iterations = 3 if args.quick else 1500
    m, v = np.zeros(TAPS), np.zeros(TAPS)
    for step in range(1, iterations + 1):  # Adam
        value, g = value_and_grad(h, TARGET, in_pass)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        h = h - 0.01 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        if step == 1 or step % 300 == 0:
            print(f"iteration {step}: loss {value:.5f}")
    final, first = loss(h, TARGET, in_pass), loss(initial, TARGET, in_pass)
    print(f"final loss {final:.5f} (initial {first:.5f})")

    plt.figure(figsize=(6, 4))
    for taps, style, label in ((initial, "--", "initial"), (h, "-", "fitted")):
        power = np.abs(response(taps)) ** 2
        plt.plot(FREQUENCIES, power, style, label=label)
    plt.plot(FREQUENCIES, TARGET, ":", label="target")
    plt.xlabel("frequency (cycles per sample)")
    plt.ylabel("power |H|^2")
    plt.legend()
    plt.tight_layout()
    plt.savefig(out / "filter_fit.png", dpi=120)
    print(f"wrote {out / 'filter_fit.png'}")


if __name__ == "__main__":
    main()
