"""Rules for numpy's linalg functions (issue 4). See numpy_rules.py for the rule shapes."""

from __future__ import annotations
