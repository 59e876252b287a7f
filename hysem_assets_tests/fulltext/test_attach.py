"""PDFs the reviewer attaches to works of the sample query: the checks, the register, the command,
and the ``pdfs`` asset taking them up before any download (and PRISMA counting them as retrieved)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from dagster import AssetSelection, DagsterInstance, materialize

from hysem_assets.cli import main
from hysem_assets.defs.acquisition import deduped_corpus, raw_metadata_assets
from hysem_assets.defs.fulltext import pdfs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.defs.screening import screening
from hysem_assets.fulltext.attach import (
    ATTACHED,
    AttachmentError,
    attach_file,
    attach_pdf,
    attachments,
    attachments_dir,
    detach_pdf,
    register_path,
)
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.review.flow import FlowInputs, prisma_counts
from hysem_assets.settings.environment import asset_file, assets_dir
from hysem_assets.settings.queries import QueryError
from hysem_assets_tests.acquisition.helpers import SAMPLE

FILES = default_snapshot_dir() / "files"
#: Whole PDFs of the sample, standing in for copies a reviewer got from a library.
PDFS = [FILES / f"10.5555_aqsr.{number}.pdf" for number in ("2019.100031", "2020.100062", "2021.100087")]
#: A PDF cut short in transfer (the sample's planted invalid_pdf).
TRUNCATED = FILES / "10.5555_ehr.2023.0001.pdf"
#: Works the sample finds no open-access copy of (one known by its PMID alone), and one it downloads.
CLOSED, PMID_ONLY, DOWNLOADED = "10.5555/jec.2019.0312", "35675501", "10.5555/ahi.2019.0203"


@pytest.fixture(scope="module")
def sample_assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's asset files up to ``deduped_corpus``, made once for the module."""
    home = tmp_path_factory.mktemp("corpus_home")
    with pytest.MonkeyPatch.context() as patch, DagsterInstance.ephemeral() as instance:
        patch.setenv("HYSEM_HOME", str(home))
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        assert materialize(
            [*raw_metadata_assets, deduped_corpus], instance=instance, resources=build_resources(), partition_key=SAMPLE
        ).success
        return assets_dir()


@pytest.fixture
def corpus(sample_assets: Path) -> pd.DataFrame:
    """The sample's works, their files copied into this test's HYSEM_HOME."""
    shutil.copytree(sample_assets, assets_dir())
    return pd.read_parquet(asset_file("deduped_corpus", SAMPLE))


def work(corpus: pd.DataFrame, name: str) -> pd.Series:
    """The sample's work with DOI or PMID ``name``."""
    return corpus[(corpus["doi"] == name) | (corpus["pmid"] == name)].iloc[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot() -> dict[str, bytes]:
    """Every file under the query's attachments folder, by path: what a refusal must leave as it was."""
    folder = attachments_dir(SAMPLE)
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} if folder.exists() else {}


def test_a_work_is_named_by_doi_pmid_or_cluster_id(corpus: pd.DataFrame):
    closed, other, downloaded = (work(corpus, name) for name in (CLOSED, PMID_ONLY, DOWNLOADED))
    assert attach_file(SAMPLE, f"https://doi.org/{CLOSED.upper()}", PDFS[0]).change == "attached"
    assert attach_file(SAMPLE, f"PMID: {PMID_ONLY}", PDFS[1]).change == "attached"
    assert attach_file(SAMPLE, downloaded["cluster_id"], PDFS[2]).change == "attached"
    register = {a.cluster_id: a for a in attachments(SAMPLE)}
    assert sorted(register) == sorted([closed["cluster_id"], other["cluster_id"], downloaded["cluster_id"]])
    for row, source in ((closed, PDFS[0]), (other, PDFS[1]), (downloaded, PDFS[2])):
        kept = register[row["cluster_id"]]
        assert (kept.doi, kept.pmid, kept.filename) == (row["doi"], row["pmid"], source.name)
        assert kept.bytes == source.stat().st_size
        assert kept.sha256 == sha256(source) and Path(kept.path).read_bytes() == source.read_bytes()
        assert Path(kept.path).is_relative_to(attachments_dir(SAMPLE)) and kept.intact()
    on_disk = json.loads(register_path(SAMPLE).read_text(encoding="utf-8"))["attachments"]
    assert [entry["cluster_id"] for entry in on_disk] == sorted(register)


def test_the_same_file_again_changes_nothing_and_another_replaces_it(corpus: pd.DataFrame):
    closed = work(corpus, CLOSED)
    first = attach_file(SAMPLE, CLOSED, PDFS[0]).attachment
    before = snapshot()
    again = attach_file(SAMPLE, closed["cluster_id"], PDFS[0])
    assert again.change == "unchanged" and "nothing changed" in again.message and snapshot() == before

    replaced = attach_pdf(SAMPLE, CLOSED, PDFS[1].read_bytes(), "library-copy.pdf")
    assert replaced.change == "replaced" and replaced.previous == first
    assert f"replacing {PDFS[0].name}" in replaced.message
    assert [a.filename for a in attachments(SAMPLE)] == ["library-copy.pdf"]
    assert not Path(first.path).exists() and Path(replaced.attachment.path).read_bytes() == PDFS[1].read_bytes()


def test_refused_attachments_say_why_in_one_line_and_write_nothing(corpus: pd.DataFrame, tmp_path: Path):
    html = tmp_path / "landing.pdf"
    html.write_text("<!DOCTYPE html><html><body>Sign in to download</body></html>", encoding="utf-8")
    refusals = [
        ((SAMPLE, CLOSED, html), "landing.pdf is not a PDF"),
        ((SAMPLE, CLOSED, TRUNCATED), "is a damaged PDF: no %%EOF marker"),
        ((SAMPLE, "10.5555/not.in.this.query", PDFS[0]), "no work of 'air-pollution-cardio-ml' has"),
    ]
    for args, reason in refusals:
        with pytest.raises(AttachmentError, match=reason) as refused:
            attach_file(*args)
        assert "\n" not in str(refused.value) and "nothing was attached" in str(refused.value)
        assert not attachments_dir(SAMPLE).exists()
    with pytest.raises(AttachmentError, match=rf"{PDFS[0].name} is [\d.]+ KB, over the [\d.]+ KB limit on PDFs"):
        attach_file(SAMPLE, CLOSED, PDFS[0], max_bytes=PDFS[0].stat().st_size - 1)
    with pytest.raises(QueryError, match="No query with slug 'no-such-query'"):
        attach_file("no-such-query", CLOSED, PDFS[0])
    assert not attachments_dir(SAMPLE).exists() and not attachments_dir("no-such-query").exists()

    attach_file(SAMPLE, CLOSED, PDFS[0])
    before = snapshot()
    other = work(corpus, PMID_ONLY)
    with pytest.raises(AttachmentError, match=f"already attached to {work(corpus, CLOSED)['cluster_id']}"):
        attach_file(SAMPLE, other["cluster_id"], PDFS[0])
    assert snapshot() == before


def test_attachments_made_at_once_all_reach_the_register(corpus: pd.DataFrame):
    """The command line and the screening page may attach at the same moment: no write is lost."""
    names = (CLOSED, PMID_ONLY, DOWNLOADED)
    with ThreadPoolExecutor(len(names)) as pool:
        done = list(pool.map(lambda pair: attach_file(SAMPLE, *pair), zip(names, PDFS)))
    assert [a.change for a in done] == ["attached"] * len(names)
    assert sorted(a.sha256 for a in attachments(SAMPLE)) == sorted(map(sha256, PDFS))


def test_attach_list_and_detach_on_the_command_line(corpus: pd.DataFrame, tmp_path: Path):
    runner = CliRunner()
    attached = runner.invoke(main, ["pdf", "attach", "--query", SAMPLE, CLOSED, str(PDFS[0])])
    assert attached.exit_code == 0, attached.output
    assert f"Attached {PDFS[0].name}" in attached.output and CLOSED in attached.output
    html = tmp_path / "page.pdf"
    html.write_bytes(b"<html></html>")
    refused = runner.invoke(main, ["pdf", "attach", "--query", SAMPLE, DOWNLOADED, str(html)])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        "Error: page.pdf is not a PDF (it does not start with %PDF-); nothing was attached"
    ]

    listed = runner.invoke(main, ["pdf", "list", "--query", SAMPLE])
    assert listed.exit_code == 0 and f"{CLOSED}\t{PDFS[0].name}" in listed.output
    detached = runner.invoke(main, ["pdf", "detach", "--query", SAMPLE, CLOSED])
    assert detached.exit_code == 0 and f"Detached {PDFS[0].name}" in detached.output
    assert attachments(SAMPLE) == [] and not [p for p in attachments_dir(SAMPLE).iterdir() if p.is_dir()]
    again = runner.invoke(main, ["pdf", "detach", "--query", SAMPLE, CLOSED])
    assert again.exit_code == 1 and f"no PDF is attached to '{CLOSED}'" in again.output


def test_a_missing_register_is_no_attachment_and_a_damaged_one_is_named():
    assert attachments(SAMPLE) == []
    register_path(SAMPLE).parent.mkdir(parents=True)
    register_path(SAMPLE).write_text("{not json", encoding="utf-8")
    with pytest.raises(AttachmentError, match="attachments.json: the register of attached PDFs cannot be read"):
        attachments(SAMPLE)
    with pytest.raises(AttachmentError, match="cannot be read"):
        detach_pdf(SAMPLE, CLOSED)


def not_retrieved(table: pd.DataFrame) -> int:
    """PRISMA's "reports not retrieved", counted by the flow from the sample's tables."""
    parsed = pd.DataFrame({"cluster_id": pd.Series(dtype=object), "error": pd.Series(dtype=object)})
    inputs = FlowInputs(
        {}, pd.read_parquet(asset_file("deduped_corpus", SAMPLE)), pd.read_parquet(asset_file("screening", SAMPLE)),
        table, parsed,
    )  # fmt: skip
    flow = prisma_counts(inputs).set_index("box")["count"]
    return int(flow["not_retrieved"])


@pytest.fixture
def run() -> Iterator[dict]:
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        yield {"instance": instance, "resources": build_resources(), "partition_key": SAMPLE}


def materialize_pdfs(run: dict) -> tuple[pd.DataFrame, dict]:
    assets = [*raw_metadata_assets, deduped_corpus, screening, pdfs]
    result = materialize(assets, selection=AssetSelection.assets("screening", "pdfs"), **run)
    assert result.success
    metadata = result.asset_materializations_for_node("pdfs")[0].metadata
    return pd.read_parquet(asset_file("pdfs", SAMPLE)), {key: value.value for key, value in metadata.items()}


def test_pdfs_take_an_attached_pdf_before_any_download(corpus: pd.DataFrame, run: dict):
    before, metadata = materialize_pdfs(run)
    closed = work(corpus, CLOSED)
    row = before.set_index("cluster_id").loc[closed["cluster_id"]]
    assert row["status"] == "no_oa_location" and pd.isna(row["source"]) and metadata["attached"] == 0
    downloads = before[before["status"] == "saved"]
    assert len(downloads) and set(downloads["source"]) == {"127.0.0.1"}  # the mirror's host

    kept = attach_file(SAMPLE, CLOSED, PDFS[0]).attachment
    attach_file(SAMPLE, DOWNLOADED, PDFS[1])
    attach_file(SAMPLE, PMID_ONLY, PDFS[2])
    after, metadata = materialize_pdfs(run)
    by_work = after.set_index("cluster_id")
    row = by_work.loc[closed["cluster_id"]]
    assert (row["status"], row["source"], row["path"], row["sha256"], row["bytes"]) == (
        "saved",
        ATTACHED,
        kept.path,
        sha256(PDFS[0]),
        PDFS[0].stat().st_size,
    )
    assert PDFS[0].name in row["reason"] and pd.isna(row["url"])
    assert by_work.loc[work(corpus, DOWNLOADED)["cluster_id"], "sha256"] == sha256(PDFS[1])  # no download asked
    assert by_work.loc[work(corpus, PMID_ONLY)["cluster_id"], "source"] == ATTACHED  # found by its PMID
    assert metadata["attached"] == 3 and metadata["saved"] == len(downloads) + 2
    assert not_retrieved(after) == not_retrieved(before) - 2

    again, _ = materialize_pdfs(run)  # the same saved rows (failures name the mirror's port, new each run)
    pd.testing.assert_frame_equal(again[again["status"] == "saved"], after[after["status"] == "saved"])

    Path(kept.path).unlink()  # a kept file lost: the work falls back to looking for open access
    fallen_back, metadata = materialize_pdfs(run)
    assert fallen_back.set_index("cluster_id").loc[closed["cluster_id"], "status"] == "no_oa_location"
    assert metadata["attached"] == 2
