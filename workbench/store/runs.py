"""Store methods for runs (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class RunsMixin(StoreCore):
    """Domain verbs on runs; every multi-row change is one `transaction()`."""
