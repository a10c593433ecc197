"""Helpers in another module of the user's code, called from ``test_calls.py``."""

import numpy as np

SCALE = 0.5


def smooth_step(x, sharpness=2.0):
    return 0.5 * (1.0 + np.tanh(sharpness * x)) * SCALE


def split_energy(x):
    kinetic = 0.5 * np.sum(x * x)
    potential = np.sum(np.cos(x))
    return kinetic, potential


def apply_scaled(f, x):
    k = 10.0  # (a local of its own named as the caller's variable the closure reads)
    y = f(x) * SCALE
    return np.sum(y) + k
