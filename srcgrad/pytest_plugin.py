"""srcgrad's pytest plugin (registered by the package's ``pytest11`` entry point): the
``--srcgrad-examples N`` option, which sets how many inputs every
:func:`srcgrad.testing.verify` check of the run tries (a quick CI run, a thorough
one), and the ``verify_gradient`` fixture::

    def test_my_gradient(verify_gradient):
        verify_gradient(loss, (W, x), gradient=my_grad)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("srcgrad")
    group.addoption(
        "--srcgrad-examples",
        type=int,
        default=None,
        metavar="N",
        help="inputs each srcgrad.testing.verify check tries (default: each check's own)",
    )


def pytest_configure(config: Any) -> None:
    examples = config.getoption("srcgrad_examples", None)
    if examples is not None:
        import importlib

        importlib.import_module("srcgrad.verify").EXAMPLES = examples


@pytest.fixture
def verify_gradient() -> Callable[..., None]:
    """:func:`srcgrad.testing.verify`, as a fixture."""
    from .verify import verify

    return verify
