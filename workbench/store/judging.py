"""Store methods for judging (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class JudgingMixin(StoreCore):
    """Domain verbs on judging; every multi-row change is one `transaction()`."""
