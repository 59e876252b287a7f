"""The ``screening`` asset: every work's relevance, rank and decision, and what goes on to full text."""

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.core.empty import empty_note
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import ReviewConfig, Screener
from hysem_assets.screening.agreement import stage_agreement
from hysem_assets.screening.decisions import STAGES, DecisionLog, decisions_path
from hysem_assets.screening.outcome import FULLTEXT_DECISION, INCLUDED, UNDECIDED, inclusion
from hysem_assets.screening.session import Screening, Standing, review_criteria


@asset(
    group_name="screening",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn()},
    description=(
        "One row per work: relevance score and rank (from the protocol's eligibility criteria until a record is "
        "included and another excluded, then from active learning on every decision), the reviewer's decision "
        "(included, maybe, excluded with a reason, undecided) from `hysem screen`, whether it goes on to full text, "
        "the full-text decision (`fulltext_decision`, `fulltext_reason`), and whether it is an included study "
        "(`included`: the one definition every view reads). Decisions are the resolved ones: two reviewers "
        "in conflict leave a work undecided until a resolution. The stopping rule's recall estimate, the "
        "conflicts and the reviewers' Cohen's kappa per stage are in the metadata."
    ),
    kinds={"python", "parquet"},
)
def screening(
    context: AssetExecutionContext, screener: Screener, review_config: ReviewConfig, deduped_corpus: pd.DataFrame
) -> Output[pd.DataFrame]:
    settings = screener.settings
    criteria = review_criteria(review_config.review(context.partition_key))
    if criteria.note:
        context.log.warning(criteria.note)
    log = DecisionLog(decisions_path(context.partition_key))
    session = Screening(deduped_corpus[["cluster_id", "title", "abstract"]], criteria)
    standing = session.standing(log.read(), settings.target_recall)
    if standing.unknown:
        context.log.warning(
            f"{len(standing.unknown)} decision(s) of {log.path} are for works this corpus no longer holds "
            f"(first: {standing.unknown[0]}); they stay in the log and count again if the works return"
        )
    table = session.table(standing, settings.undecided_top_share)
    table[INCLUDED] = inclusion(table, deduped_corpus)
    context.log.info(
        f"Screening: {len(standing.decisions):,} of {len(table):,} works decided, ranked by "
        f"{standing.ranking.ranked_by}; {int(table['proceeds'].sum()):,} go on to full text, "
        f"{int(table[INCLUDED].sum()):,} included"
    )
    return Output(table, metadata=screening_metadata(table, standing, log.path))


def agreement_metadata(standing: Standing) -> dict:
    """Per stage: Cohen's kappa of the two reviewers (None with one reviewer), the records it is over, and
    the conflicts no resolution settled."""
    metadata = {}
    for stage in STAGES:
        agreement = stage_agreement(standing.votes[stage])
        metadata[f"kappa_{stage}"] = None if agreement is None else agreement.kappa
        metadata[f"kappa_{stage}_records"] = 0 if agreement is None else agreement.records
        metadata[f"conflicts_{stage}"] = len(standing.votes[stage].conflicts)
        if agreement is not None:
            metadata[f"agreement_{stage}"] = agreement.said
    return metadata


def screening_metadata(table: pd.DataFrame, standing: Standing, path) -> dict:
    counts = table["decision"].value_counts()
    fulltext = table[FULLTEXT_DECISION].value_counts()
    excluded = table[table["decision"] == "excluded"]
    estimate = standing.estimate
    undecided = table[table["decision"] == UNDECIDED].sort_values("rank")
    return {
        "dagster/row_count": len(table),
        **empty_note(len(table)),
        **{decision: int(counts.get(decision, 0)) for decision in ("included", "maybe", "excluded", UNDECIDED)},
        **{f"fulltext_{decision}": int(fulltext.get(decision, 0)) for decision in ("included", "excluded")},
        **agreement_metadata(standing),
        "proceeds": int(table["proceeds"].sum()),
        "included_studies": int(table[INCLUDED].sum()),
        "ranked_by": standing.ranking.ranked_by,
        "stopping_rule_met": estimate.stop,
        "recall_at_least": MetadataValue.float(round(estimate.recall_at_least, 4)),
        "relevant_remaining_at_most": estimate.remaining_at_most,
        "stopping_rule": MetadataValue.md(
            f"Recall is at least **{estimate.recall_at_least:.1%}** and at most {estimate.remaining_at_most:,} "
            f"relevant records remain among the {estimate.unscreened:,} unscreened, with {estimate.confidence:.0%} "
            f"confidence (hypergeometric test on the recent decisions). Screening may stop at "
            f"{estimate.target_recall:.0%}: {'met' if estimate.stop else 'not yet'}."
        ),
        "exclusion_reasons": MetadataValue.md(
            excluded["reason"].value_counts().rename_axis("reason").reset_index(name="works").to_markdown(index=False)
            if len(excluded)
            else "none yet"
        ),
        "next_to_screen": table_preview(undecided, ["rank", "cluster_id", "title", "score"], rows=10, width=100),
        "decisions_file": MetadataValue.path(str(path)),
    }
