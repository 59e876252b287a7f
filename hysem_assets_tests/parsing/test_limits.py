"""Bounded parsing: a document over a limit is set aside with its reason, and the rest goes on."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hysem_assets.parsing.limits import RESOURCE_LIMIT, TOO_LARGE, WorkerLimits
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.parse import page_ranges, parse_pdf
from hysem_assets.parsing.pool import parse_many
from hysem_assets_tests.parsing.bombs import decompression_bomb, many_pages
from hysem_assets_tests.parsing.test_sample_pdfs import sample_pdfs
from hysem_assets_tests.parsing.workers import hang_on_marked
from hysem_assets_tests.paths import PROJECT_ROOT
from hysem_assets_tests.processes import wait_for_children, wait_gone


def test_a_decompression_bomb_is_too_large_before_any_parser_holds_it(tmp_path: Path):
    bomb = decompression_bomb(tmp_path / "bomb.pdf", inflated_mb=40)
    assert bomb.stat().st_size < 200_000  # a few hundred times smaller on disk
    started = time.monotonic()
    document = parse_pdf(bomb)  # the profile's default limits
    assert time.monotonic() - started < 10
    assert document.status == TOO_LARGE and "page 1" in document.error and "16 MB" in document.error
    assert document.pages == 1 and not document.markdown


def test_a_bomb_inside_a_form_the_page_draws_is_too_large(tmp_path: Path):
    bomb = decompression_bomb(tmp_path / "form.pdf", inflated_mb=20, in_form=True)
    document = parse_pdf(bomb)
    assert document.status == TOO_LARGE and "page 1" in document.error


def test_too_many_pages_is_too_large(tmp_path: Path):
    document = parse_pdf(many_pages(tmp_path / "long.pdf", 30), ParseOptions(max_pages=20))
    assert document.status == TOO_LARGE and document.error == "too large: 30 pages, over the limit of 20"


def test_a_long_document_is_converted_range_by_range_into_one_row(tmp_path: Path):
    assert page_ranges(250, 100) == [(1, 100), (101, 200), (201, 250)]
    long = many_pages(tmp_path / "long.pdf", 250)
    in_ranges = parse_pdf(long, ParseOptions(pages_per_range=100))
    whole = parse_pdf(long, ParseOptions(pages_per_range=1000))
    assert in_ranges.ok and in_ranges.pages == 250
    assert "Page 1 of a long report" in in_ranges.markdown and "Page 250 of a long report" in in_ranges.markdown
    assert in_ranges.markdown.split() == whole.markdown.split()


def test_over_the_memory_limit_a_document_gets_resource_limit_and_the_rest_parse(tmp_path: Path):
    pdfs = sample_pdfs()
    if not pdfs:
        pytest.skip("the sample PDFs are not built")
    bomb = decompression_bomb(tmp_path / "bomb.pdf", inflated_mb=6)  # unbounded: about 6 GB
    cap = 2560
    options = ParseOptions(max_page_content_mb=None)  # let it reach the parser: the OS limit must stop it
    results = parse_many([bomb, pdfs[0]], options, workers=1, limits=WorkerLimits(memory_mb=cap))
    assert results[0].status == RESOURCE_LIMIT, results[0]
    assert "out of memory" in results[0].error and f"{cap:,} MB" in results[0].error
    assert results[1].ok and results[1].markdown  # parsed by the worker that replaced the first
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < cap + 1024, f"a worker peaked at {peak_mb:,.0f} MB"


def test_a_document_past_the_wall_time_is_stopped_and_its_worker_replaced(tmp_path: Path):
    paths = [tmp_path / "hang.pdf", tmp_path / "next.pdf", tmp_path / "last.pdf"]
    started = time.monotonic()
    results = parse_many(paths, workers=1, parse=hang_on_marked, limits=WorkerLimits(seconds=3))
    assert time.monotonic() - started < 60
    assert results[0].status == RESOURCE_LIMIT and "limit of 3 s" in results[0].error
    assert [r.ok for r in results[1:]] == [True, True]
    assert results[1].markdown == results[2].markdown  # one fresh worker took over and parsed both


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_parse_workers_die_with_a_killed_parent(tmp_path: Path):
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from hysem_assets.parsing.pool import parse_many
        from hysem_assets_tests.parsing.workers import hang_on_marked
        parse_many([Path("{tmp_path}/hang1.pdf"), Path("{tmp_path}/hang2.pdf")], workers=2, parse=hang_on_marked)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT)
    try:
        workers = wait_for_children(parent.pid, "spawn_main", count=2, timeout=60)
        time.sleep(1.5)  # each worker arms its parent-death signal first thing
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    assert not wait_gone(workers), "parse workers outlived their parent"


def test_an_interrupted_parse_stops_its_workers_at_once(tmp_path: Path):
    """Ctrl-C (or Dagster's interrupt) during a parse must not wait for the document in hand."""
    script = textwrap.dedent(
        f"""
        import os, signal, threading
        from pathlib import Path
        from hysem_assets.parsing.pool import parse_many
        from hysem_assets_tests.parsing.workers import hang_on_marked
        threading.Timer(8, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            parse_many([Path("{tmp_path}/hang.pdf")], workers=1, parse=hang_on_marked)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        """
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert "interrupted" in done.stdout and time.monotonic() - started < 40, done.stderr[-2000:]
