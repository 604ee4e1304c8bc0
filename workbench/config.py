"""Workbench configuration, resolved once at the edge and passed down.

Precedence: command-line flag > environment variable (``WORKBENCH_DB``,
``WORKBENCH_LOCK_TIMEOUT``) > defaults. Only the edge (CLI, Streamlit entrypoint)
calls ``resolve``; library code receives a ``WorkbenchConfig``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DB = Path("labels") / "workbench.duckdb"
DEFAULT_LABELS_DIR = Path("labels")
DEFAULT_LOCK_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True)
class WorkbenchConfig:
    """Resolved settings.

    Attributes:
        db_path: the DuckDB file of this workbench project.
        labels_dir: where exported qrels versions and their manifest are written.
        lock_timeout_s: how long an operation waits for another process to
            release the store before raising ``StoreLockedError`` (seconds).
    """

    db_path: Path = DEFAULT_DB
    labels_dir: Path = DEFAULT_LABELS_DIR
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S


def resolve(
    db: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    lock_timeout_s: float | None = None,
) -> WorkbenchConfig:
    """Resolve the configuration: flag > environment > default.

    Args:
        db: the ``--db`` flag, or None when not given.
        env: the environment to read (pass ``os.environ`` at the edge).
        lock_timeout_s: the ``--lock-timeout`` flag, or None.

    Returns:
        A frozen ``WorkbenchConfig``. ``labels_dir`` is the database's folder.

    Raises:
        UsageError: ``WORKBENCH_LOCK_TIMEOUT`` is not a finite number of seconds >= 0
            (the rule of ``--lock-timeout``).
    """
    env = env or {}
    db_path = Path(db) if db else Path(env.get("WORKBENCH_DB") or DEFAULT_DB)
    timeout = lock_timeout_s
    if timeout is None:
        raw = env.get("WORKBENCH_LOCK_TIMEOUT")
        timeout = _seconds(raw) if raw else DEFAULT_LOCK_TIMEOUT_S
    return WorkbenchConfig(db_path=db_path, labels_dir=db_path.parent, lock_timeout_s=timeout)


def _seconds(raw: str) -> float:
    """``WORKBENCH_LOCK_TIMEOUT``'s value as seconds: a finite number >= 0, as ``--lock-timeout`` takes."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 <= value < math.inf):
        from workbench.errors import UsageError

        raise UsageError(f"WORKBENCH_LOCK_TIMEOUT: expected a number of seconds >= 0, got {raw!r}")
    return value
