"""Review deliverables per query: ``prisma_flow`` (PRISMA 2020 counts and diagram),
``evidence_table`` (one row per included study and a findings sheet, CSV and XLSX, with the
syntheses of those findings) and ``updates`` (what each search of a living review changed)."""

import base64
import json

import pandas as pd
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetIn,
    AssetKey,
    MetadataValue,
    Output,
    asset,
)

from hysem_assets.core.empty import NO_RECORDS, empty_note, nothing_to_check
from hysem_assets.core.spreadsheets import write_csv, write_workbook
from hysem_assets.defs.metadata import latest_metadata, table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import ReviewConfig
from hysem_assets.findings.schema import DIRECTIONS
from hysem_assets.review.diagram import draw_flow
from hysem_assets.review.evidence import evidence_table as build_evidence_table
from hysem_assets.review.evidence import field_columns, findings_sheet
from hysem_assets.review.flow import FlowInputs, prisma_counts, reconcile, screening_out_of_step
from hysem_assets.review.syntheses import Synthesis, not_pooled_table, pooled_table, synthesize, write_syntheses
from hysem_assets.review.updates import history_frame, review_state, update_row
from hysem_assets.screening.outcome import included_ids
from hysem_assets.settings.environment import asset_file, review_dir
from hysem_assets.sources.registry import query_sources, record_sources
from hysem_assets.stores.tables import DamagedAssetError, read_table

RECONCILE_CHECK = "flow_counts_reconcile"
#: Forest plots the evidence table's metadata shows; every one is on disk beside it.
FOREST_PLOTS_SHOWN = 10


@asset(
    group_name="review",
    partitions_def=queries_partitions,
    ins={
        **{source: AssetIn(key=AssetKey(["raw_metadata", source])) for source in record_sources()},
        "deduped_corpus": AssetIn(),
        "screening": AssetIn(),
        "pdfs": AssetIn(),
        "parsed_docs": AssetIn(),
    },
    check_specs=[
        AssetCheckSpec(
            RECONCILE_CHECK,
            asset="prisma_flow",
            blocking=True,
            description="The flow adds up: identified - duplicates - marked ineligible by automation = screened, "
            "screened - excluded = sought, sought - not retrieved = assessed, assessed - not readable - excluded at "
            "full text = reports of included studies, sought - excluded at full text = studies included, and "
            "reasons sum to their box.",
        )
    ],
    description=(
        "PRISMA 2020 flow of the query: records identified per source, duplicates removed, records marked "
        "ineligible by the screening ranking, records screened (by a reviewer or let through by rank) and excluded "
        "(with the reviewer's reasons, or retracted), reports sought, not retrieved (by PDF status), not readable "
        "(by parse error) and excluded at full text (with the reviewer's reasons), studies included (the screening "
        "table's included set, by full text or abstract only) and the reports of included studies; each box counted "
        "from its own table, with the diagram as SVG and PNG."
    ),
    kinds={"python", "parquet", "matplotlib"},
)
def prisma_flow(
    context: AssetExecutionContext,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    pdfs: pd.DataFrame,
    parsed_docs: pd.DataFrame,
    review_config: ReviewConfig,
    **raw_metadata: pd.DataFrame,
):
    searched = query_sources(review_config.query(context.partition_key))
    flow = prisma_counts(FlowInputs(raw_metadata, deduped_corpus, screening, pdfs, parsed_docs, searched))
    diagram = draw_flow(flow, title=f"PRISMA 2020 flow: {context.partition_key}")
    folder = review_dir(context.partition_key)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prisma_flow.svg").write_text(diagram.svg, encoding="utf-8")
    (folder / "prisma_flow.png").write_bytes(diagram.png)
    counts = dict(zip(flow["box"], flow["count"]))
    png = base64.b64encode(diagram.png).decode()
    yield Output(
        flow,
        metadata={
            "dagster/row_count": len(flow),
            **empty_note(int(counts["identified"])),
            "identified": int(counts["identified"]),
            "screened": int(counts["screened"]),
            "included": int(counts["included"]),
            "included_reports": int(counts["included_reports"]),
            "flow": MetadataValue.md(flow[["stage", "label", "count"]].to_markdown(index=False)),
            "diagram": MetadataValue.md(f"![PRISMA 2020 flow diagram](data:image/png;base64,{png})"),
            "svg": MetadataValue.path(str(folder / "prisma_flow.svg")),
            "png": MetadataValue.path(str(folder / "prisma_flow.png")),
        },
    )
    problems = reconcile(flow)
    stale = screening_out_of_step(screening, pdfs)
    if problems and stale:
        problems.append(stale)
    yield AssetCheckResult(
        check_name=RECONCILE_CHECK,
        passed=not problems,
        description=nothing_to_check(int(counts["identified"])),
        severity=AssetCheckSeverity.ERROR,
        metadata={"problems": MetadataValue.md("\n".join(f"- {p}" for p in problems) or "none")},
    )


@asset(
    group_name="review",
    partitions_def=queries_partitions,
    ins={
        name: AssetIn()
        for name in (
            "deduped_corpus",
            "screening",
            "library",
            "extracted_fields",
            "topics",
            "findings",
        )
    },
    deps=["prisma_flow"],
    description=(
        "One row per included study (the screening table's included set, as counted by prisma_flow; a study "
        "without a readable full text is read from its abstract, text_source says which): formatted citation, "
        "year, title, DOI, dominant topic, retraction flag, and every extracted field of the query's review protocol; a findings sheet with "
        "one row per comparison those studies report (preferred rows first, abstract-only ones marked); both as CSV "
        "and XLSX. The findings are pooled per comparison (random effects) with a forest plot each, for the report."
    ),
    kinds={"python", "parquet", "excel"},
)
def evidence_table(
    context: AssetExecutionContext,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    library: pd.DataFrame,
    extracted_fields: pd.DataFrame,
    topics: pd.DataFrame,
    findings: pd.DataFrame,
) -> Output[pd.DataFrame]:
    included = included_ids(screening)
    table = build_evidence_table(included, deduped_corpus, library, extracted_fields, topics)
    sheet = findings_sheet(included, findings, library)
    syntheses = synthesize(findings, included, library)
    folder = review_dir(context.partition_key)
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(table, folder / "evidence_table.csv")
    write_csv(sheet, folder / "evidence_findings.csv")
    write_workbook({"Evidence": table, "Findings": sheet}, folder / "evidence_table.xlsx")
    write_syntheses(syntheses, folder)
    fields = field_columns(extracted_fields)
    pooled = [synthesis for synthesis in syntheses if synthesis.pooled]
    context.log.info(
        f"Evidence table: {len(table):,} included studies, {len(fields)} extracted fields, {len(sheet):,} findings, "
        f"{len(pooled)} comparisons pooled, {len(syntheses) - len(pooled)} groups not pooled"
    )
    preferred = sheet[sheet["preferred"]]
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table), NO_RECORDS if deduped_corpus.empty else "no study is included"),
            "fields": ", ".join(fields),
            "preview": table_preview(table, ["citation", "topic", *fields[:3]], rows=10, width=60),
            "findings": len(sheet),
            "findings_by_direction": MetadataValue.json(
                {direction: int(preferred["direction"].eq(direction).sum()) for direction in DIRECTIONS}
            ),
            "findings_abstract_only": int(sheet["abstract_only"].sum()),
            "pooled": len(pooled),
            "not_pooled": len(syntheses) - len(pooled),
            "syntheses": MetadataValue.md(_syntheses_markdown(syntheses)),
            "forest_plots": MetadataValue.md(_forest_markdown(pooled)),
            "csv": MetadataValue.path(str(folder / "evidence_table.csv")),
            "findings_csv": MetadataValue.path(str(folder / "evidence_findings.csv")),
            "xlsx": MetadataValue.path(str(folder / "evidence_table.xlsx")),
        },
    )


def _syntheses_markdown(syntheses: list[Synthesis]) -> str:
    pooled, not_pooled = pooled_table(syntheses), not_pooled_table(syntheses)
    parts = [pooled.to_markdown(index=False)] if len(pooled) else ["_no comparison pooled_"]
    if len(not_pooled):
        parts += ["**Not pooled**", not_pooled.to_markdown(index=False)]
    return "\n\n".join(parts)


def _forest_markdown(pooled: list[Synthesis]) -> str:
    """The first pooled comparisons' forest plots as images (PNG data URIs), and how many more are on disk."""
    shown = [
        f"![Forest plot: {s.comparison}](data:image/png;base64,{base64.b64encode(s.png or b'').decode()})"
        for s in pooled[:FOREST_PLOTS_SHOWN]
    ]
    if len(pooled) > FOREST_PLOTS_SHOWN:
        shown.append(f"_{len(pooled) - FOREST_PLOTS_SHOWN} more in the review folder's forest/_")
    return "\n\n".join(shown) or "_no comparison pooled_"


@asset(
    group_name="review",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "evidence_table": AssetIn()},
    deps=["answers"],
    description=(
        "One row per search of the query (the first, then each re-search of a living review): new records and works, "
        "works newly retracted or corrected, works dropped, answers whose text or cited works changed (with a diff; "
        "answers are compared when they are materialized), and the update's PRISMA flow (studies of the previous "
        "version + new studies = total, the included studies being the evidence table's)."
    ),
    kinds={"python", "parquet"},
)
def updates(
    context: AssetExecutionContext, deduped_corpus: pd.DataFrame, evidence_table: pd.DataFrame
) -> Output[pd.DataFrame]:
    slug = context.partition_key
    history = _stored(context, "updates", slug, history_frame([]))
    answers = _stored(context, "answers", slug, pd.DataFrame(columns=["question", "markdown", "json"]))
    state = review_state(deduped_corpus, evidence_table["cluster_id"], answers)
    searches = {
        source: latest_metadata(context.instance, AssetKey(["raw_metadata", source]), slug) or {}
        for source in record_sources()
    }
    previous = json.loads(history["state_json"].iloc[-1]) if len(history) else None
    row = update_row(
        previous,
        state,
        number=len(history) + 1,
        search="; ".join(f"{s}: {m['search']}" for s, m in searches.items() if m.get("search")),
        searched_through=max(
            (m["searched_through"] for m in searches.values() if m.get("searched_through")), default=""
        ),
    )
    # only the latest state is compared against: earlier rows drop theirs, so the table grows by counts and lists
    history = history_frame([*({**r, "state_json": None} for r in history.to_dict("records")), row])
    context.log.info(
        f"Update {row['update']}: {row['new_works']} new works, {row['retracted']} newly retracted, "
        f"{row['corrected']} corrected, {row['dropped']} dropped, {row['changed_answers']} answers changed"
    )
    return Output(history, metadata={**_update_metadata(row, len(history)), **empty_note(len(deduped_corpus))})


def _stored(context: AssetExecutionContext, asset: str, slug: str, empty: pd.DataFrame) -> pd.DataFrame:
    """An asset's stored table: the updates so far, or the answers (none yet when the QA stage has not run);
    ``empty`` when there is none, and with a warning when its file is damaged."""
    try:
        return read_table(asset_file(asset, slug))
    except FileNotFoundError:
        return empty
    except DamagedAssetError as exc:
        context.log.warning(f"{exc}; this update goes on without it")
        return empty


def _update_metadata(row: dict, updates_so_far: int) -> dict:
    flow = pd.DataFrame(json.loads(row["flow_json"]))
    listed = {
        name: [f"{w['title'] or w['work']}" for w in json.loads(row[f"{name}_json"])]
        for name in ("new_works", "retracted", "corrected", "dropped")
    }
    changed = json.loads(row["changed_answers_json"])
    return {
        "dagster/row_count": updates_so_far,
        "update": row["update"],
        "searched_through": row["searched_through"] or "(unknown)",
        "search": row["search"] or "(unknown)",
        **{name: row[name] for name in ("new_records", "new_works", "retracted", "corrected", "dropped")},
        "changed_answers": row["changed_answers"],
        "included_total": row["included_total"],
        "flow": MetadataValue.md(flow[["label", "count"]].to_markdown(index=False)),
        "what_changed": MetadataValue.md(
            "\n".join(
                [
                    f"**{name.replace('_', ' ')}**: " + ("; ".join(items[:20]) or "none")
                    for name, items in listed.items()
                ]
                + [f"**answer changed**: {c['question']}" for c in changed]
            )
        ),
    }
