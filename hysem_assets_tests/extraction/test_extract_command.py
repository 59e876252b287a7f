"""``hysem extract``: a reviewer's own records through the same extraction as ``extracted_fields``."""

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from hysem_assets.cli import main

TRIAL = {
    "id": "trial-1",
    "title": "Ginger versus placebo for nausea and vomiting in early pregnancy: a randomised controlled trial",
    "abstract": (
        "We randomly assigned 120 pregnant women with nausea in their first trimester to ginger capsules or "
        "placebo for four days. The primary outcome was the change in nausea score; the number of vomiting "
        "episodes was a secondary outcome. Nausea scores fell more with ginger than with placebo."
    ),
}

SPANISH = (
    "Se asignaron al azar 120 mujeres embarazadas con náuseas en el primer trimestre a cápsulas de jengibre o "
    "placebo durante cuatro días. La variable principal fue el cambio en la puntuación de náuseas."
)


def run(tmp_path: Path, lines: list[str], suffix: str = ".jsonl", exit_code: int = 0) -> tuple[list[dict], str]:
    source, output = tmp_path / f"records{suffix}", tmp_path / "out.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["extract", "--protocol", "generic", str(source), "-o", str(output)])
    assert result.exit_code == exit_code, result.output
    return [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()], result.stderr


def test_fields_with_evidence_inside_each_record_and_bad_lines_reported(tmp_path: Path) -> None:
    records = [
        json.dumps(TRIAL),
        '{"id": "broken", "title": ',
        json.dumps({"id": "es", "title": "Jengibre frente a placebo", "abstract": SPANISH}),
        json.dumps({"id": "empty", "title": "", "abstract": ""}),
        json.dumps({"title": "no id"}),
        json.dumps(
            {"id": "long", "title": "Aspirin", "abstract": "Patients were treated with aspirin for pain. " * 4500}
        ),
        json.dumps(
            {"id": "controls", "title": "Aspirin\x07 trial", "abstract": "Adults\x00 with migraine got aspirin."}
        ),
    ]
    rows, stderr = run(tmp_path, records, exit_code=1)  # the readable records are written; the exit tells
    assert "line 2: not JSON" in stderr and "line 5: no `id`" in stderr
    assert stderr.strip().splitlines()[-1].startswith("Error: 2 lines of ")
    by_id = {row["id"]: row for row in rows}
    assert list(by_id) == ["trial-1", "es", "empty", "long", "controls"]

    trial = by_id["trial-1"]
    assert trial["status"] == "ok"
    assert any("pregnant women" in value for value in trial["population"])
    assert any("ginger" in value.lower() for value in trial["intervention_or_exposure"])
    assert trial["comparator"] == ["placebo"]
    assert any("nausea" in value.lower() for value in trial["outcomes"])
    assert trial["study_design"] == "randomised controlled trial"
    text = f"{TRIAL['title']}\n\n{TRIAL['abstract']}"
    for field, entries in trial["evidence"].items():
        for entry in entries:
            assert text[entry["start"] : entry["end"]] == entry["sentence"], field

    assert by_id["es"]["status"] == "empty" and "not English" in by_id["es"]["error"]
    assert by_id["es"]["population"] == [] and by_id["es"]["comparator"] == []
    assert by_id["empty"]["status"] == "empty" and by_id["empty"]["error"]
    assert by_id["long"]["status"] == "ok" and by_id["long"]["intervention_or_exposure"]
    assert by_id["controls"]["status"] == "ok"


def test_a_stated_publication_type_decides_the_design_and_is_its_evidence(tmp_path: Path) -> None:
    editorial = {
        "id": "editorial",
        "title": "Ginger for nausea: what the new trials mean",
        "abstract": TRIAL["abstract"],  # a trial's words, but the indexer typed the record an editorial
        "publication_types": ["Journal Article", "Editorial"],
    }
    review = {**editorial, "id": "review", "publication_types": "Journal Article; Review"}  # says nothing precise
    rows, _ = run(tmp_path, [json.dumps(editorial), json.dumps(review)])

    stated, unstated = rows
    assert stated["study_design"] == "narrative review or editorial"
    assert stated["evidence"]["study_design"] == [
        {
            "value": "narrative review or editorial",
            "sentence": "Publication type: Editorial",
            "source": "publication_types",
        }
    ]
    assert unstated["study_design"] == "randomised controlled trial"  # from the text, with its sentence
    assert unstated["evidence"]["study_design"][0]["sentence"].startswith("We randomly assigned")
    assert stated["population"] == unstated["population"]  # the other fields read the text either way


def test_csv_records_with_a_full_text(tmp_path: Path) -> None:
    source = tmp_path / "records.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "title", "abstract", "text"])
        writer.writeheader()
        writer.writerow({**TRIAL, "text": ""})
        writer.writerow({"id": "ft", "title": "A trial", "abstract": "", "text": f"# Methods\n\n{TRIAL['abstract']}"})
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["extract", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [(row["id"], row["text_source"]) for row in rows] == [("trial-1", "abstract"), ("ft", "full_text")]
    assert rows[1]["outcomes"]


def test_a_csv_without_ids_is_refused_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "records.csv"
    source.write_text("title,abstract\nA,B\n")
    result = CliRunner().invoke(main, ["extract", str(source), "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code != 0 and "`id` column" in result.output


def test_text_that_is_not_utf8_is_named_by_its_line_and_nothing_else_is_lost(tmp_path: Path) -> None:
    source, output = tmp_path / "records.jsonl", tmp_path / "out.jsonl"
    latin1 = json.dumps({"id": "fr", "title": "Gingembre et nausée"}, ensure_ascii=False).encode("latin-1")
    source.write_bytes(json.dumps(TRIAL).encode() + b"\n" + latin1 + b"\n")
    result = CliRunner().invoke(main, ["extract", str(source), "-o", str(output)])
    assert result.exit_code == 1
    assert f"{source}, line 2: not UTF-8 text (byte 0xE9 at byte 41); save the file as UTF-8" in result.stderr
    assert [json.loads(line)["id"] for line in output.read_text(encoding="utf-8").splitlines()] == ["trial-1"]

    table = tmp_path / "records.csv"
    table.write_bytes(b"id,title\ntrial-1,Ginger\nfr,Gingembre et naus\xe9e\n")
    refused = CliRunner().invoke(main, ["extract", str(table), "-o", str(tmp_path / "csv.jsonl")])
    assert refused.exit_code == 1 and not (tmp_path / "csv.jsonl").exists()
    assert f"Error: {table}, line 3: not UTF-8 text (byte 0xE9 at byte 21)" in refused.output


def test_a_record_longer_than_any_article_is_left_out_with_its_size(tmp_path: Path) -> None:
    huge = json.dumps({"id": "huge", "title": "A", "text": "word " * 400_001})
    rows, stderr = run(tmp_path, [json.dumps(TRIAL), huge], exit_code=1)
    assert "line 2: record 'huge' holds 2,000,010 characters of text, over the 2,000,000 one record may hold" in stderr
    assert [row["id"] for row in rows] == ["trial-1"]


def test_a_csv_full_text_longer_than_the_csv_modules_default_field_is_read(tmp_path: Path) -> None:
    source = tmp_path / "records.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "title", "abstract", "text"])
        writer.writeheader()
        writer.writerow({**TRIAL, "text": "Methods. " + "x" * 140_000 + "\n\n" + TRIAL["abstract"]})
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["extract", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["text_source"] for line in output.read_text().splitlines()] == ["full_text"]
