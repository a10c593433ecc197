"""Stage 2, normalize: the user's function lowered to the core language (one operation
per statement, on names and constants; ``break``, ``continue`` and early ``return`` as
flags: :mod:`.exits`), every temporary recorded with the user's expression it came from.
The lowering itself is :mod:`.lower` (with :mod:`.expressions`, :mod:`.iteration` and
:mod:`.statements`; :mod:`.expression_helpers` for what needs none of its state)."""

from .expression_helpers import is_static
from .lower import Normalized, normalize

__all__ = ["Normalized", "is_static", "normalize"]
