"""Store methods for qrels (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class QrelsMixin(StoreCore):
    """Domain verbs on qrels; every multi-row change is one `transaction()`."""
