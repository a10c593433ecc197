"""Hypothesis profiles for srcgrad's tests.

``ci`` (the default) keeps the whole suite fast; ``thorough`` runs many more
examples. Choose with the environment variable ``SRCGRAD_HYPOTHESIS_PROFILE``::

    SRCGRAD_HYPOTHESIS_PROFILE=thorough python -m pytest tests
"""

import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", max_examples=15, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.load_profile(os.environ.get("SRCGRAD_HYPOTHESIS_PROFILE", "ci"))
