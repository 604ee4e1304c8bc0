"""Pure rules of the human judging loop: agreement, final grades, queues.

No database, UI or file access here; the store and the services feed these
functions in-memory mappings.
"""

from workbench.judging.adjudication import (
    DEFAULT_RULE,
    Disagreement,
    FinalGradeRule,
    FinalGrades,
    QrelsDiff,
    diff_qrels,
    disagreements,
    final_grades,
    get_rule,
    rule_names,
)
from workbench.judging.agreement import (
    AgreementFigure,
    AgreementReport,
    PairAgreement,
    agreement_report,
    cohen_kappa,
    krippendorff_alpha,
)
from workbench.judging.queue import (
    DEFAULT_BAND_SIZE,
    JudgingView,
    PoolItem,
    assessor_order,
    highlight_html,
    plan_assignments,
    query_terms,
)

__all__ = [
    "DEFAULT_BAND_SIZE",
    "DEFAULT_RULE",
    "AgreementFigure",
    "AgreementReport",
    "Disagreement",
    "FinalGradeRule",
    "FinalGrades",
    "JudgingView",
    "PairAgreement",
    "PoolItem",
    "QrelsDiff",
    "agreement_report",
    "assessor_order",
    "cohen_kappa",
    "diff_qrels",
    "disagreements",
    "final_grades",
    "get_rule",
    "highlight_html",
    "krippendorff_alpha",
    "plan_assignments",
    "query_terms",
    "rule_names",
]
