"""Where a number came from: the workbench's git commit (an input file's content hash is
``workbench.formats.manifest.file_sha256``).

``git_commit()`` is the commit of the workbench's own checkout when the package
runs from one (``<commit>`` or ``<commit>-dirty`` when tracked files differ
from it), and "" for an installed package or when git is unavailable. It is
recorded with every stored evaluation and printed by the gate, so a score can
be traced to the code that computed it.
"""

from __future__ import annotations

import functools
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[3]
"""The checkout holding the ``workbench`` package: workbench/services/evaluation/ -> its parent."""


@functools.cache
def git_commit() -> str:
    """The workbench checkout's commit (``abc123...`` or ``abc123...-dirty``), or "" when not a checkout.

    Runs ``git rev-parse HEAD`` and ``git diff --quiet HEAD`` in the package's
    repository (at most 5 s each); any failure gives "".
    """
    if not (_ROOT / ".git").exists():
        return ""
    import subprocess  # here: most commands never ask (its import costs a scoring run's start-up)

    try:
        head = subprocess.run(["git", "-C", str(_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(_ROOT), "diff", "--quiet", "HEAD", "--"], capture_output=True,
                               timeout=5).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{head}-dirty" if head and dirty else head

