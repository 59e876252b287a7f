"""One query's screening: ranked by the criteria until both decisions exist, then by what the
reviewer taught it; its table says which works go on to full text."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hysem_assets.screening.criteria import criteria_relevance, key_terms
from hysem_assets.screening.decisions import DEFAULT_REVIEWER, FULLTEXT, TITLE_ABSTRACT, Decision, DecisionsError
from hysem_assets.screening.outcome import FULLTEXT_DECISION, FULLTEXT_REASON
from hysem_assets.screening.ranker import featurize
from hysem_assets.screening.session import (
    RANKED_BY_CRITERIA,
    RANKED_BY_LEARNING,
    SCREENING_COLUMNS,
    Criteria,
    Screening,
    Standing,
    query_criteria,
)
from hysem_assets.settings.protocols import Eligibility

CRITERIA = Criteria(
    inclusion=["Field studies reporting nitrate contamination of groundwater wells"],
    exclusion=["Laboratory column experiments"],
    reasons=["Laboratory column experiments", "other"],
)
WATER = [
    ("Nitrate contamination of groundwater wells in farmland", "Nitrate in 80 wells rose with fertilizer use."),
    ("Groundwater nitrate near dairy farms", "Wells downstream of farms held more nitrate."),
    ("Nitrate leaching to shallow groundwater", "Field plots and wells sampled for nitrate over two years."),
    ("Denitrification in an aquifer", "Groundwater nitrate fell along the flow path to the wells."),
]
OTHER = [
    ("Stock market volatility and interest rates", "Daily returns of equity indices."),
    ("Bank lending after a financial crisis", "Credit supply fell for small firms."),
    ("Exchange rates and inflation", "Currency movements pass through to consumer prices."),
    ("Corporate bonds and credit ratings", "Ratings downgrades raise bond spreads."),
]


def works(pairs: list[tuple[str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cluster_id": [f"c-{number}" for number in range(len(pairs))],
            "title": [title for title, _ in pairs],
            "abstract": [abstract for _, abstract in pairs],
        }
    )


def screening() -> Screening:
    """Water records and finance records, interleaved so that file order ranks nothing."""
    pairs = [pair for both in zip(WATER, OTHER) for pair in both]
    return Screening(works(pairs), CRITERIA)


def water(screen: Screening) -> set[str]:
    return {record for record, title in zip(screen.ids, screen.works["title"]) if title in dict(WATER)}


# criteria


def test_a_record_sharing_the_inclusion_criterias_words_scores_above_one_that_does_not():
    texts = ["nitrate contamination in groundwater wells", "stock market volatility", "soil carbon under grazing"]
    scores = criteria_relevance(featurize(texts), ["nitrate contamination of groundwater"])
    assert scores[0] > scores[1] and scores[0] > scores[2] and scores[0] > 0


def test_resembling_the_exclusion_criteria_lowers_a_score():
    texts = ["nitrate in groundwater wells", "nitrate in groundwater laboratory columns", "stock markets"]
    plain = criteria_relevance(featurize(texts), ["nitrate groundwater"])
    lowered = criteria_relevance(featurize(texts), ["nitrate groundwater"], ["laboratory columns"])
    assert lowered[1] < plain[1] and lowered[1] < lowered[0]
    assert lowered[0] == pytest.approx(plain[0])  # a record sharing nothing with the exclusion keeps its score
    assert list(criteria_relevance(featurize(["a", ""]), ["nitrate"])) == [0.0, 0.0]  # nothing to compare: no order


def test_key_terms_drop_stop_words_and_criteria_filler_and_keep_order():
    criteria = ["Studies reporting nitrate in groundwater wells", "Included: field studies of groundwater recharge"]
    assert key_terms(criteria) == ["nitrate", "groundwater", "wells", "field", "recharge"]
    assert key_terms(["Articles published in English since 2000, using any design"]) == ["design"]


# ranking


def test_before_both_decisions_records_are_ranked_by_the_criteria():
    screen = screening()
    standing = screen.standing([], 0.95)
    assert standing.ranking.ranked_by == RANKED_BY_CRITERIA
    top = {screen.ids[position] for position in standing.ranking.order[:4]}
    assert top == water(screen)
    only_included = screen.standing([Decision("c-0", "included")], 0.95)
    assert only_included.ranking.ranked_by == RANKED_BY_CRITERIA  # one kind of decision teaches nothing


def test_one_included_and_one_excluded_switch_to_active_learning():
    screen = screening()
    log = [Decision("c-0", "included"), Decision("c-1", "excluded", "other")]
    standing = screen.standing(log, 0.95)
    assert standing.ranking.ranked_by == RANKED_BY_LEARNING
    assert (standing.included, standing.excluded) == (1, 1)
    assert screen.ids[first_undecided(screen, standing)] in water(screen) - {"c-0"}
    undone = screen.standing([*log, Decision("c-1", "undo")], 0.95)
    assert undone.ranking.ranked_by == RANKED_BY_CRITERIA and "c-1" not in undone.decisions


def test_the_next_record_is_the_highest_ranked_undecided_one():
    screen = screening()
    log = [Decision("c-0", "included"), Decision("c-1", "excluded", "other"), Decision("c-2", "included")]
    standing = screen.standing(log, 0.95)
    in_rank_order = [position for position in standing.ranking.order if screen.ids[position] not in standing.decisions]
    assert first_undecided(screen, standing) == in_rank_order[0]
    decide_all = [Decision(record, "excluded", "other") for record in screen.ids]
    assert first_undecided(screen, screen.standing(decide_all, 0.95)) is None


def test_decisions_for_records_not_in_the_corpus_are_kept_aside():
    screen = screening()
    log = [Decision("gone", "included"), Decision("c-1", "excluded", "other")]
    standing = screen.standing(log, 0.95)
    assert standing.unknown == ["gone"] and list(standing.decisions) == ["c-1"]
    assert standing.ranking.ranked_by == RANKED_BY_CRITERIA  # the included one is not here to learn from
    assert (standing.estimate.screened, standing.estimate.unscreened) == (1, len(screen) - 1)


def test_duplicate_cluster_ids_are_refused():
    pairs = works(WATER[:3]).assign(cluster_id=["c-1", "c-2", "c-1"])
    with pytest.raises(DecisionsError, match="record 'c-1' appears twice"):
        Screening(pairs, CRITERIA)


# the table


def expected_proceeds(table: pd.DataFrame, share: float, finished: bool) -> list[bool]:
    cutoff = 0 if finished else math.ceil(share * len(table))
    return [
        decision == "included" or (decision == "undecided" and rank <= cutoff)
        for decision, rank in zip(table["decision"], table["rank"])
    ]


def test_the_table_has_one_row_per_work_with_its_rank_and_decision():
    screen = screening()
    log = [Decision("c-0", "included", at="t1"), Decision("c-1", "excluded", "other", at="t2")]
    standing = screen.standing(log, 0.95)
    assert not standing.estimate.stop
    table = screen.table(standing, 0.25)
    assert tuple(table.columns) == SCREENING_COLUMNS and table["cluster_id"].tolist() == screen.ids
    assert sorted(table["rank"]) == list(range(1, len(screen) + 1))
    assert table.set_index("rank").loc[1, "cluster_id"] == screen.ids[standing.ranking.order[0]]
    assert np.array_equal(table["score"].to_numpy(), standing.ranking.scores)
    by_id = table.set_index("cluster_id")
    assert by_id.loc["c-0", ["decision", "reason", "decided_at"]].tolist() == ["included", None, "t1"]
    assert by_id.loc["c-1", ["decision", "reason", "decided_at"]].tolist() == ["excluded", "other", "t2"]
    assert set(by_id.drop(index=["c-0", "c-1"])["decision"]) == {"undecided"}
    assert bool(by_id.loc["c-0", "proceeds"]) and not by_id.loc["c-1", "proceeds"]
    # undecided works in the top quarter of all works (ranks 1 to 2 of 8) go on; the others do not
    assert table["proceeds"].tolist() == expected_proceeds(table, 0.25, finished=False)
    undecided = table[table["decision"] == "undecided"]
    assert undecided["proceeds"].any() and not undecided["proceeds"].all()
    assert table["proceeds"].sum() < screen.table(standing, 1.0)["proceeds"].sum() == len(screen) - 1


def test_once_the_stopping_rule_is_met_no_undecided_work_proceeds():
    """5 included, then 50 excluded with 5 left: at most 1 relevant record remains (95% confidence), so
    recall is at least 5/6 and an 80% target is met."""
    pairs = [(f"Nitrate in groundwater wells, site {n}", None) for n in range(5)]
    pairs += [(f"Market report number {n}", f"Prices of commodity {n}") for n in range(55)]
    screen = Screening(works(pairs), CRITERIA)
    log = [Decision(f"c-{n}", "included") for n in range(5)]
    log += [Decision(f"c-{n}", "excluded", "other") for n in range(5, 55)]
    standing = screen.standing(log, target_recall=0.8)
    assert standing.estimate.stop and standing.estimate.unscreened == 5
    table = screen.table(standing, 1.0)
    assert table["proceeds"].tolist() == (table["decision"] == "included").tolist()
    assert not screen.standing(log, target_recall=0.95).estimate.stop  # 5/6 is short of 95%


def test_an_empty_corpus_gives_an_empty_table_typed_like_a_filled_one():
    filled = screening()
    filled_table = filled.table(filled.standing([], 0.95), 0.2)
    empty = Screening(works([]), CRITERIA)
    standing = empty.standing([Decision("gone", "included")], 0.95)
    assert len(empty) == 0 and standing.unknown == ["gone"] and standing.estimate.stop
    assert first_undecided(empty, standing) is None
    table = empty.table(standing, 0.2)
    assert len(table) == 0 and table.dtypes.to_dict() == filled_table.dtypes.to_dict()
    assert tuple(table.columns) == SCREENING_COLUMNS


def test_a_corpus_of_one_record_is_screened():
    screen = Screening(works([WATER[0]]), CRITERIA)
    table = screen.table(screen.standing([], 0.95), 0.1)
    assert table[["rank", "decision"]].values.tolist() == [[1, "undecided"]]
    assert table["proceeds"].tolist() == [True]  # the top 10% of one work rounds up to that work
    excluded = screen.standing([Decision("c-0", "excluded", "other")], 0.95)
    assert excluded.estimate.stop and screen.table(excluded, 0.1)["proceeds"].tolist() == [False]
    included = screen.standing([Decision("c-0", "included")], 0.95)
    assert included.estimate.stop and screen.table(included, 0.1)["proceeds"].tolist() == [True]


def test_works_without_title_or_abstract_can_still_be_screened():
    screen = Screening(works([(None, None), ("", None)]), CRITERIA)
    assert len(screen.table(screen.standing([], 0.95), 0.5)) == 2


# criteria of a query


def test_without_eligibility_criteria_the_query_words_stand_in_and_a_note_says_where_to_add_them():
    criteria = query_criteria(None, "generic", ["Nitrate in groundwater", "", "nitrate AND groundwater"])
    assert criteria.inclusion == ["Nitrate in groundwater", "nitrate AND groundwater"] and criteria.exclusion == []
    assert criteria.reasons == ["not relevant", "other"]
    assert "config/protocols/generic.yaml" in criteria.note and "not relevant, other" in criteria.note
    assert criteria.key_terms == ["nitrate", "groundwater"]


def test_a_protocols_eligibility_gives_its_criteria_and_reasons():
    eligibility = Eligibility(inclusion=["Field studies of nitrate"], exclusion=["Laboratory studies", " "])
    criteria = query_criteria(eligibility, "generic", ["ignored"])
    assert (criteria.inclusion, criteria.exclusion) == (["Field studies of nitrate"], ["Laboratory studies", " "])
    assert criteria.reasons == ["Laboratory studies", "other"] and criteria.note == ""
    assert criteria.stage_reasons(FULLTEXT) == criteria.reasons  # none named: the title and abstract ones stand in
    at_full_text = eligibility.model_copy(update={"fulltext_reasons": ["no estimate", " ", "no estimate"]})
    criteria = query_criteria(at_full_text, "generic", [])
    assert criteria.stage_reasons(FULLTEXT) == ["no estimate"] and criteria.stage_reasons(TITLE_ABSTRACT) == [
        "Laboratory studies",
        "other",
    ]


def test_the_table_holds_each_stages_resolved_decision_and_a_conflict_is_undecided():
    screen = screening()
    log = [
        Decision("c-0", "included", reviewer="Ann"),
        Decision("c-0", "maybe", reviewer="Bo"),
        Decision("c-1", "maybe", reviewer="Ann"),
        Decision("c-2", "included", reviewer="Ann"),
        Decision("c-2", "excluded", "other", reviewer="Bo"),
        Decision("c-4", "excluded", "other", reviewer="Ann"),
        Decision("c-0", "excluded", "no estimate", reviewer="Ann", stage=FULLTEXT),
        Decision("c-0", "excluded", "no estimate", reviewer="Bo", stage=FULLTEXT),
        Decision("c-3", "included", stage=FULLTEXT),  # undecided at title and abstract, decided at full text
        Decision("gone", "included", stage=FULLTEXT),  # a work the corpus no longer holds
    ]
    standing = screen.standing(log, 0.95)
    table = screen.table(standing, 0).set_index("cluster_id")
    assert table.loc[["c-0", "c-1", "c-2", "c-4"], "decision"].tolist() == [
        "included",
        "maybe",
        "undecided",
        "excluded",
    ]
    assert table.loc[["c-0", "c-1", "c-2", "c-4"], "proceeds"].tolist() == [True, True, False, False]
    assert table.loc["c-0", [FULLTEXT_DECISION, FULLTEXT_REASON]].tolist() == ["excluded", "no estimate"]
    assert table.loc["c-1", FULLTEXT_DECISION] == "undecided" and table.loc["c-1", FULLTEXT_REASON] is None
    assert table.loc["c-3", FULLTEXT_DECISION] == "included" and set(standing.fulltext) == {"c-0", "c-3"}
    assert standing.ranking.ranked_by == RANKED_BY_LEARNING  # "maybe" teaches the ranker as included does
    # each reviewer is shown the best-ranked record they have not voted on
    rank = {screen.ids[position]: k for k, position in enumerate(standing.ranking.order)}
    for who, voted in (("Ann", {"c-0", "c-1", "c-2", "c-4"}), ("Bo", {"c-0", "c-2"})):
        shown = screen.ids[screen.next_for(standing, who, TITLE_ABSTRACT)]
        assert shown not in voted and rank[shown] == min(rank[r] for r in screen.ids if r not in voted)
    assert screen.next_for(standing, "Ann", FULLTEXT, ["c-0", "c-1"]) == screen.position["c-1"]


def test_exclusions_worded_as_negations_do_not_count_the_inclusion_topic_against_a_record():
    texts = [
        "machine learning of air pollution and cardiovascular mortality",
        "air pollution and cardiovascular mortality in a cohort",
        "machine learning for air pollution forecasts",
    ]
    inclusion = ["air pollution", "cardiovascular outcomes", "machine learning methods"]
    negated = ["No air pollution exposure", "No cardiovascular outcome", "No machine learning method"]
    records = featurize(texts)
    assert list(criteria_relevance(records, inclusion, negated)) == pytest.approx(
        list(criteria_relevance(records, inclusion))
    )
    scores = criteria_relevance(records, inclusion, negated)
    assert scores[0] > max(scores[1], scores[2])  # the record meeting every criterion ranks first


def test_the_sample_protocols_criteria_rank_records_meeting_them_first():
    from hysem_assets.settings.protocols import load_protocol

    eligibility = load_protocol("pollution-cardio-ml").eligibility
    texts = [
        "Machine learning prediction of stroke admissions from ambient particulate matter",
        "Particulate matter and stroke admissions: a time-series study",
        "Deep learning forecasts of ozone levels",
        "Household cooking fuel, indoor air pollution and blood pressure in mice",
    ]
    scores = criteria_relevance(featurize(texts), eligibility.inclusion, eligibility.exclusion)
    assert int(np.argmax(scores)) == 0 and scores[3] == min(scores)


def first_undecided(screen: Screening, standing: Standing) -> int | None:
    """The record one reviewer is shown next at title and abstract."""
    return screen.next_for(standing, DEFAULT_REVIEWER, TITLE_ABSTRACT)
