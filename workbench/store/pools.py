"""Store methods for pools (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class PoolsMixin(StoreCore):
    """Domain verbs on pools; every multi-row change is one `transaction()`."""
