"""Store methods for collections (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class CollectionsMixin(StoreCore):
    """Domain verbs on collections; every multi-row change is one `transaction()`."""
