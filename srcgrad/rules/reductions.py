"""Rules for numpy's reductions functions (issue 4). See numpy_rules.py for the rule shapes."""

from __future__ import annotations
