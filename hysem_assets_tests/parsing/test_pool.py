import os

import pytest

from hysem_assets.parsing import pool
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.pool import parse_many, pin_device
from hysem_assets_tests.parsing.builders import encrypted_pdf
from hysem_assets_tests.parsing.test_sample_pdfs import sample_pdfs
from hysem_assets_tests.parsing.workers import crash_on_marked, report_pinning


def test_pinning_hides_every_other_gpu(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    assert pin_device("cuda:2") == "cuda" and os.environ["CUDA_VISIBLE_DEVICES"] == "2"
    assert pin_device("cpu") == "cpu" and os.environ["CUDA_VISIBLE_DEVICES"] == ""


def test_workers_take_the_devices_in_turn(monkeypatch: pytest.MonkeyPatch):
    for variable in ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(variable, "")
    seen = []
    for slot in range(3):
        device = pool.device_for(slot, ("cuda:0", "cuda:1"))
        seen.append((device, pool.prepare_worker(device, 1), os.environ["CUDA_VISIBLE_DEVICES"]))
    assert seen == [("cuda:0", "cuda", "0"), ("cuda:1", "cuda", "1"), ("cuda:0", "cuda", "0")]
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"
    assert pool.device_for(5, ()) == "cpu"


def test_each_worker_process_sees_only_its_device(tmp_path):
    paths = [tmp_path / f"doc{k}.pdf" for k in range(4)]
    results = parse_many(paths, ParseOptions(), devices=["cuda:0", "cuda:1"], workers=1, parse=report_pinning)
    assert [r.path for r in results] == [str(p) for p in paths]
    assert {(r.device, r.markdown) for r in results} <= {("cuda:0", "0|cuda|False"), ("cuda:1", "1|cuda|False")}


def test_failures_and_a_crashed_worker_stay_with_their_documents(tmp_path):
    pdfs = sample_pdfs()
    if len(pdfs) < 2:
        pytest.skip("the sample PDFs are not built")
    crash = tmp_path / "crash.pdf"
    crash.write_bytes(pdfs[0].read_bytes())
    paths = [pdfs[0], crash, encrypted_pdf(tmp_path / "locked.pdf"), pdfs[1]]
    progress = []
    results = parse_many(
        paths,
        ParseOptions(),
        workers=2,
        parse=crash_on_marked,
        progress=lambda done, total: progress.append((done, total)),
    )
    assert [r.path for r in results] == [str(p) for p in paths]
    assert results[0].ok and results[3].ok and results[0].markdown and results[3].markdown
    assert "worker process died" in results[1].error
    assert results[2].error.startswith("encrypted PDF")
    assert progress[-1] == (4, 4)
