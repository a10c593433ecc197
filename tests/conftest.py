"""Hypothesis profiles for srcgrad's tests.

``ci`` (the default) keeps the whole suite fast; ``thorough`` runs many more
examples; ``survey`` runs a few without shrinking, to list what fails quickly.
Choose with the environment variable ``SRCGRAD_HYPOTHESIS_PROFILE``::

    SRCGRAD_HYPOTHESIS_PROFILE=thorough python -m pytest tests
"""

import os

from hypothesis import HealthCheck, Phase, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

# CI draws the same examples on every run (a clean clone has no example database), so
# that a landing never depends on luck; the thorough profile explores new ones each time
settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    suppress_health_check=_QUIET,
    print_blob=True,
    derandomize=True,
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
# a quick survey of what fails, without shrinking (for development)
settings.register_profile(
    "survey",
    max_examples=5,
    deadline=None,
    suppress_health_check=_QUIET,
    phases=[Phase.explicit, Phase.generate],
)
settings.load_profile(os.environ.get("SRCGRAD_HYPOTHESIS_PROFILE", "ci"))
