"""Bad input and a hostile disk get one line and a non-zero exit from `hysem`, never a traceback.

A read-only or full HYSEM_HOME is made real with a private mount namespace (`unshare`):
a read-only bind mount of the home, or a tmpfs of a few kilobytes mounted on it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hysem_assets.cli import SAMPLE_QUERY, main
from hysem_assets.cli.models import rebuild_model
from hysem_assets_tests.paths import HYSEM


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def hysem(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(HYSEM), *args], capture_output=True, text=True, timeout=timeout)


def one_error_line(output: str) -> str:
    """The output holds exactly one error line and no traceback; return it."""
    assert "Traceback" not in output, output
    [line] = [line for line in output.splitlines() if line.startswith("Error:")]
    return line


def _namespaces() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


needs_namespaces = pytest.mark.skipif(not _namespaces(), reason="needs `unshare -rm` (user and mount namespaces)")


def in_namespace(mount: str, *args: str) -> subprocess.CompletedProcess:
    """Run `hysem ARGS` with HYSEM_HOME mounted read-only (``ro``) or as a tiny tmpfs (``full``)."""
    home = os.environ["HYSEM_HOME"]
    setup = {
        "ro": f"mount --bind '{home}' '{home}' && mount -o remount,ro,bind '{home}'",
        "full": f"mount -t tmpfs -o size=64k tmpfs '{home}'",
    }[mount]
    command = " ".join(f"'{arg}'" for arg in [str(HYSEM), *args])
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"{setup} && exec {command}"], capture_output=True, text=True, timeout=300
    )


def test_query_add_validates_every_field_in_one_place(config: Path):
    before = (config / "queries.yaml").read_bytes()
    cases = {
        ("--sources", ""): "sources: no sources; name at least one, or leave `sources` out for the default ones",
        ("--sources", "pubmed,openalex,pubmed"): "sources: sources ['pubmed'] are listed more than once",
        ("--sources", "pubmed,arxiv"): "unknown sources ['arxiv']",
        ("--mailto", "me at example"): "mailto 'me at example' is not an e-mail address",
        ("--from", "1700-01-01"): "date_from 1700-01-01 is before 1800-01-01",
        ("--from", "2999-01-01"): "date_from 2999-01-01 is in the future",
        ("--from", "2020-01-01", "--to", "2019-01-01"): "date_from 2020-01-01 is after date_to 2019-01-01",
        ("--slug", "s" * 81): "slug is 81 characters long; at most 80",
        ("--schedule", "fortnightly"): "schedule 'fortnightly' is neither daily, weekly, monthly nor a cron string",
    }
    for options, message in cases.items():
        result = invoke("query", "add", "ozone", "--slug", "ok3", *options)
        assert result.exit_code == 2 and message in one_error_line(result.output), (options, result.output)
    assert (config / "queries.yaml").read_bytes() == before
    listed = invoke("query", "list")
    assert listed.exit_code == 0 and listed.output.startswith(SAMPLE_QUERY)


def test_a_bad_contact_address_in_the_environment_is_one_line_naming_the_variable(
    config: Path, monkeypatch: pytest.MonkeyPatch
):
    before = (config / "queries.yaml").read_bytes()
    monkeypatch.setenv("HYSEM_MAILTO", "me\x07@example.org")
    result = invoke("query", "add", "ozone", "--slug", "ozone")
    assert result.exit_code == 1
    assert "HYSEM_MAILTO='me\\x07@example.org' is not an e-mail address" in one_error_line(result.output)
    assert (config / "queries.yaml").read_bytes() == before
    monkeypatch.setenv("HYSEM_MAILTO", "me@example.org")
    assert invoke("query", "add", "ozone", "--slug", "ozone").exit_code == 0


def test_queries_file_problems_name_the_file_line_and_cause(config: Path):
    path = config / "queries.yaml"
    cases = {
        b"- slug: a\n  query: b\n": "queries.yaml:1: the top level is a list; it must be a mapping with a `queries:` list",
        b"queries:\n  - slug: a\n    query: caf\xff\n": "queries.yaml:3: not UTF-8 text (byte 0xff)",
        b"queries:\n  - slug: a\n    query: [b\n": "queries.yaml:4:1: while parsing a flow sequence",
        b"queries:\n  - slug: a\n    query: b\n  - slug: c\n    query: d\n    sources: []\n": (
            "queries.yaml:4: query 'c' is invalid: sources: no sources"
        ),
        b"queries: {slug: a}\n": "queries.yaml:1: `queries` must be a list of queries",
    }
    for content, message in cases.items():
        path.write_bytes(content)
        result = invoke("query", "list")
        assert result.exit_code == 1 and message in one_error_line(result.output), (content, result.output)


def test_an_alias_bomb_in_the_queries_file_is_refused_at_once(config: Path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    entry = "queries:\n  - slug: a\n    query: b\n    sources: *a8\n"  # 10^9 sources once expanded
    (config / "queries.yaml").write_text("\n".join(levels) + "\n" + entry, encoding="utf-8")
    started = time.monotonic()
    result = hysem("query", "list", timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    assert (
        "queries.yaml:4:" in one_error_line(result.stderr)
        and "aliases expand to more than 10,000 values" in result.stderr
    )


def test_selection_asset_and_output_mistakes_are_one_line(config: Path, tmp_path: Path):
    unparsable = invoke("materialize", "--query", SAMPLE_QUERY, "--select", "(((")
    assert unparsable.exit_code == 2
    assert "--select '(((': not an asset selection. Assets: " in one_error_line(unparsable.output)
    unknown = invoke("materialize", "--query", SAMPLE_QUERY, "--select", "raw_metadata/arxiv")
    assert unknown.exit_code == 2 and "no such asset. Assets: answers, canonical_terms" in one_error_line(
        unknown.output
    )
    nothing = invoke("materialize", "--query", SAMPLE_QUERY, "--select", "group:nope")
    assert nothing.exit_code == 2 and "selects no asset of a query" in one_error_line(nothing.output)
    no_asset = invoke("show", "raw_metadata/arxiv", "--query", SAMPLE_QUERY)
    line = one_error_line(no_asset.output)
    assert no_asset.exit_code == 1 and "No such asset: 'raw_metadata/arxiv'" in line and "raw_metadata/pubmed" in line
    missing_folder = tmp_path / "no-such-folder" / "out.csv"
    no_folder = invoke("show", "raw_metadata/pubmed", "--query", SAMPLE_QUERY, "-o", str(missing_folder))
    assert no_folder.exit_code == 2
    assert f"the folder {missing_folder.parent} does not exist" in one_error_line(no_folder.output)


@pytest.mark.parametrize(
    "command",
    [
        ["show", "raw_metadata/pubmed", "--query", SAMPLE_QUERY, "-o", "{home}/assets/raw_metadata/pubmed/x.parquet"],
        ["report", "--query", SAMPLE_QUERY, "-o", "{home}/dagster/report.html"],
        ["dedupe", "{source}", "-o", "{home}/qdrant/out.csv"],
        ["extract", "{source}", "-o", "{home}/out.jsonl"],
        ["export-preferences", "-o", "{home}/llm_cache/preferences.parquet"],
    ],
    ids=lambda command: command[0],
)
def test_an_output_inside_the_home_is_refused_and_nothing_is_written(
    isolated_home: Path, tmp_path: Path, command: list[str]
):
    source = tmp_path / "records.csv"
    source.write_text("id,title,abstract\na,Ozone and the heart,Ozone raised admissions.\n", encoding="utf-8")
    before = sorted(isolated_home.rglob("*"))
    result = invoke(*(part.format(home=isolated_home, source=source) for part in command))
    assert result.exit_code == 2
    line = one_error_line(result.output)
    assert "is inside HYSEM_HOME" in line and "write it somewhere else" in line
    assert sorted(isolated_home.rglob("*")) == before


def test_ui_on_a_taken_port_exits_at_once_starting_nothing(isolated_home: Path):
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = hysem("ui", "--port", str(port), timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert f"port {port} on 127.0.0.1 is not free" in line and "--port" in line
    assert not (isolated_home / "dagster").exists()  # no instance prepared, no daemon started


def test_a_full_device_while_writing_output_is_one_line(tmp_path: Path):
    source = tmp_path / "export.csv"
    source.write_text("ID,title,author,year\na,Ozone and the heart,Roe,2020\n", encoding="utf-8")
    result = invoke("dedupe", str(source), "-o", "/dev/full")
    assert result.exit_code == 1
    assert one_error_line(result.output).startswith("Error: No space left on the device. Free some space")


@needs_namespaces
def test_a_read_only_home_is_one_line_and_query_add_leaves_the_queries_file_alone(config: Path):
    before = (config / "queries.yaml").read_bytes()
    added = in_namespace("ro", "query", "add", "ozone", "--slug", "ro1", "--mailto", "me@example.org")
    assert added.returncode == 1
    line = one_error_line(added.stderr)
    assert "Read-only file system" in line and "point HYSEM_HOME at a writable folder" in line
    assert (config / "queries.yaml").read_bytes() == before  # nothing appended: file and home stay in step

    assert invoke("query", "add", "ozone", "--slug", "ok1", "--mailto", "me@example.org").exit_code == 0
    status = in_namespace("ro", "query", "add", "ozone two", "--slug", "ro2", "--mailto", "me@example.org")
    line = one_error_line(status.stderr)
    assert status.returncode == 1 and "hysem cannot write its state in" in line and "unable to open database" in line
    assert b"ro2" not in (config / "queries.yaml").read_bytes()
    debug = in_namespace("ro", "--debug", "query", "add", "ozone two", "--slug", "ro2")
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.rstrip().splitlines()[-1].startswith("Error: hysem cannot write its state in")


@needs_namespaces
def test_a_full_home_is_one_line(config: Path):
    result = in_namespace("full", "query", "add", "ozone", "--slug", "full1", "--mailto", "me@example.org")
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert line.startswith("Error: disk full: ") and "point HYSEM_HOME at a folder on another disk" in line
    assert b"full1" not in (config / "queries.yaml").read_bytes()


@pytest.mark.parametrize(
    ("digest", "said"),
    [("a" * 64, "sha256 model aaaaaaaaaaaa"), ({"evidence": "b" * 64, "direction": "c" * 64},
                                               "sha256 evidence bbbbbbbbbbbb, direction cccccccccccc")],
)  # fmt: skip
def test_a_rebuilt_model_names_the_hash_of_each_of_its_files(digest, said, tmp_path, capsys):
    """A one-file model (the span tagger) and a model of parts (the findings model) both name what they wrote."""
    rebuild_model(lambda data, folder, progress: {"sha256": digest}, tmp_path, tmp_path / "data", None)
    assert capsys.readouterr().out == f"wrote {tmp_path} ({said})\n"
