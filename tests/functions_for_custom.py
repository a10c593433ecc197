"""User code with custom rules (srcgrad.primitive) and stop_gradient, for test_custom.py."""

import numpy as np

import srcgrad


@srcgrad.primitive
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@logsumexp.defvjp
def logsumexp_vjp(dout, result, x):
    return dout * np.exp(x - result)


@logsumexp.defjvp
def logsumexp_jvp(tangents, result, x):
    (dx,) = tangents
    return np.sum(np.exp(x - result) * dx)


def uses_lse(x):
    return logsumexp(x * 2.0) ** 2


@srcgrad.primitive
def scaled(x, y):
    return x * y


@scaled.defvjp
def scaled_vjp(dout, result, x, y):
    return dout * y, dout * x


def uses_scaled(x, y):
    return np.sum(scaled(x, y))


@srcgrad.primitive
def wrong(x):
    return 2 * x


@wrong.defvjp
def wrong_vjp(dout, result, x):
    return 3 * dout  # deliberately scaled


def uses_wrong(x):
    return np.sum(wrong(x))


def uses_stop(x):
    return np.sum(x * srcgrad.stop_gradient(x))


@srcgrad.primitive
def forward_only(x):
    return np.sin(x)


@forward_only.defjvp
def forward_only_jvp(tangents, result, x):
    (dx,) = tangents
    return np.cos(x) * dx


def uses_forward_only(x):
    return np.sum(forward_only(x))


@srcgrad.primitive
def bad_arity(x, y):
    return x * y


@bad_arity.defvjp
def bad_arity_vjp(dout, result, x, y):
    return dout * y  # one cotangent for two arguments


def uses_bad_arity(x, y):
    return np.sum(bad_arity(x, y))


@srcgrad.primitive
def no_rules(x):
    return x


def uses_no_rules(x):
    return np.sum(no_rules(x))


def inactive_primitive(x, c):
    return np.sum(x * logsumexp(c))
