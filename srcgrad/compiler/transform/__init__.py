"""Stage 4, transform: the derivative of normalized, analyzed code as a new function.

- :mod:`.forward`: forward mode (a tangent beside every value);
- :mod:`.reverse`: reverse mode (a primal sweep that records, then adjoints in reverse);
- :mod:`.builder`: statements and runtime-helper calls shared by both;
- :mod:`.naming`: fresh names that never collide with the user's.
"""
