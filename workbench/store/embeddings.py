"""Store methods for embeddings (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class EmbeddingsMixin(StoreCore):
    """Domain verbs on embeddings; every multi-row change is one `transaction()`."""
