"""The syntheses the evidence table writes and the report reads: pooled comparisons with forest plots, the rest with
their reason."""

from __future__ import annotations

from pathlib import Path

from hysem_assets.review.syntheses import not_pooled_table, pooled_table, read_syntheses, synthesize, write_syntheses

from . import tables


def test_the_included_studies_findings_are_pooled_and_the_rest_said_with_a_reason() -> None:
    found = synthesize(tables.findings(), ["w1", "w2"], tables.library())

    assert [(s.comparison, s.pooled) for s in found] == [
        ("aspirin vs placebo: major bleeding", False),
        (tables.POOLED_STROKE, True),
    ]
    pooled = found[1]
    assert [study["label"] for study in pooled.result["studies"]] == ["Doe, w1", "Doe, w2"]  # w3 is not included
    assert pooled.svg is not None and "<svg" in pooled.svg and pooled.png and pooled.png.startswith(b"\x89PNG")
    [row] = pooled_table(found).to_dict("records")
    assert row["comparison"] == tables.POOLED_STROKE and row["measure"] == "hazard ratio" and row["k"] == 2
    assert row["method"] == "DerSimonian-Laird" and row["95% prediction interval"] == ""  # none below three studies
    assert row["95% CI"].count(" to ") == 1 and row["I²"].endswith("%")
    assert not_pooled_table(found).to_dict("records") == [
        {"comparison": "aspirin vs placebo: major bleeding", "studies": "Doe, w1", "reason": "one study"}
    ]


def test_what_is_written_reads_back_and_replaces_an_earlier_run(tmp_path: Path) -> None:
    found = synthesize(tables.findings(), ["w1", "w2"], tables.library())
    write_syntheses(found, tmp_path)
    assert read_syntheses(tmp_path) == found
    assert sorted(p.name for p in (tmp_path / "forest").iterdir()) == ["002.png", "002.svg"]

    write_syntheses(found[:1], tmp_path)
    assert read_syntheses(tmp_path) == found[:1] and not any((tmp_path / "forest").iterdir())
    assert read_syntheses(tmp_path / "never-written") == []
