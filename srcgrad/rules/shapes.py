"""Rules for numpy's shapes functions (issue 4). See numpy_rules.py for the rule shapes."""

from __future__ import annotations
