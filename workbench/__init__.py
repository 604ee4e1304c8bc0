"""IR judgment and pooling workbench.

The public Python API is ``evaluate`` (``from workbench import evaluate``; see
``workbench.api``), imported on first use so that ``import workbench`` (and the
command line) stays free of the scorer's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.version import __version__

__all__ = ["EvaluationResults", "__version__", "evaluate"]

if TYPE_CHECKING:
    from workbench.api import EvaluationResults, evaluate


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "EvaluationResults"):
        from workbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
