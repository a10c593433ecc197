"""Rules for numpy's elementwise functions (issue 4). See numpy_rules.py for the rule shapes."""

from __future__ import annotations
