"""The findings table's contract: one row per comparison a study reports, read by every view of results.

The ``findings`` asset writes it; the graph's Finding nodes, the synthesis route of ``hysem ask``,
the evidence table's findings sheet and the meta-analyses read it, so its columns are named here
once. A direction is one of the three strings of Evidence Inference's labels.
"""

from __future__ import annotations

from typing import Final

INCREASED: Final = "significantly increased"
DECREASED: Final = "significantly decreased"
NO_DIFFERENCE: Final = "no significant difference"
#: The labels of a comparison's result, in the order the model's outputs follow.
DIRECTIONS: Final = (INCREASED, DECREASED, NO_DIFFERENCE)

#: Where a finding's evidence sentence was read.
ABSTRACT: Final = "abstract"
FULLTEXT: Final = "fulltext"

#: Columns of the findings table, in order, with their pandas dtypes.
COLUMNS: Final[dict[str, str]] = {
    "cluster_id": "string",  # the work
    "finding_id": "string",  # stable id of the comparison within the partition (work + terms + source)
    "intervention": "string",  # the tagger's span, as the text writes it
    "comparator": "string",
    "outcome": "string",
    "intervention_term": "string",  # the canonical term beside it (canonical_terms), else the span folded
    "comparator_term": "string",
    "outcome_term": "string",
    "direction": "string",  # one of DIRECTIONS
    "confidence": "Float64",  # the model's probability of that direction for this evidence
    "evidence": "string",  # the evidence sentence, verbatim
    "source": "string",  # ABSTRACT or FULLTEXT
    "section": "string",  # the section heading of the evidence ("Abstract", "Results", ...)
    "start": "Int64",  # character offsets of the evidence in the text read
    "end": "Int64",
    "preferred": "boolean",  # False for an abstract finding of a comparison the full text also reports
    "measure": "string",  # canonical measure name of extraction's estimates ("hazard ratio", ...), when stated
    "estimate": "Float64",
    "ci_low": "Float64",
    "ci_high": "Float64",
    "p_value": "Float64",
    "study_kind": "string",  # "primary" or "review" (a meta-analysis or systematic review): never pooled or counted as a study
}
