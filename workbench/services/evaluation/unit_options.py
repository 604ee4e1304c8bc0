"""What ``workbench score`` was asked about retrieval units, duplicate groups and no-answer topics.

``UnitOptions`` lives apart from ``services.evaluation.units`` (which scores the unit
views and imports the unit, group and abstention rules) so that the command
can tell whether it needs those views without importing them: a plain score
of two files does not. ``services.evaluation.units`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class UnitOptions:
    """What ``workbench score`` was asked about units, groups and no-answer topics.

    Attributes:
        units: the views, e.g. ``("doc",)`` or ``("chunk", "doc")`` (empty: the run's own unit only).
        chunk_map: a chunk map file for run files (default: the run's chunk collection's map).
        spans: the ``--qrels`` file holds span qrels (topic doc start end [grade]).
        min_share: the span overlap rule's minimum share (0 = any overlap).
        qrels_to_chunks: take document qrels down to chunks (every chunk inherits the grade).
        dedupe: ``none`` or ``groups``.
        groups_file: a groups file added to the stored groups.
        no_answer_file: a topic list of no-answer topics (beside topic metadata ``no_answer``).
        answer_threshold: a result counts as an answer only when scored above it.
    """

    units: tuple[str, ...] = ()
    chunk_map: Path | None = None
    spans: bool = False
    min_share: float = 0.0
    qrels_to_chunks: bool = False
    dedupe: str = "none"
    groups_file: Path | None = None
    no_answer_file: Path | None = None
    answer_threshold: float | None = None

    def active(self) -> bool:
        """True when anything beyond a plain score was asked for."""
        return bool(self.units or self.spans or self.dedupe != "none" or self.no_answer_file
                    or self.answer_threshold is not None or self.chunk_map)

    def unit_mode(self) -> bool:
        """True when the score needs unit views (units, spans, duplicate groups, a chunk map); no-answer
        options alone are handled by a plain score."""
        return bool(self.units or self.spans or self.dedupe != "none" or self.chunk_map)
