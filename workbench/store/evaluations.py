"""Store methods for evaluations (a mixin of `LabelStore`)."""

from __future__ import annotations

from workbench.store.core import StoreCore


class EvaluationsMixin(StoreCore):
    """Domain verbs on evaluations; every multi-row change is one `transaction()`."""
