"""Every test runs with its own HYSEM_HOME, so nothing touches a user's state."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster._core.storage.defs_state.base import set_defs_state_storage

from hysem_assets_tests.paths import PROJECT_ROOT, REALDATA

#: The end-to-end modules that take minutes each, slowest first. They start first: on a few workers, a long
#: module started last would run alone at the end while the other workers idle.
SLOW_FIRST = (
    "ui/test_walkthrough.py",
    "test_cli.py",
    "test_faults.py",
    "runs/test_shared_server.py",
    "test_living_review.py",
    "test_export.py",
    "test_incremental.py",
    "test_pipeline.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the modules of :data:`SLOW_FIRST` first, in its order; the rest keep theirs."""
    root = PROJECT_ROOT / "hysem_assets_tests"
    rank = {str(root / module): k for k, module in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(str(item.path), len(SLOW_FIRST)))


@pytest.fixture(scope="session")
def shared_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of exported models for the session: exporting takes seconds, and its tests use their own."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, shared_models: Path
) -> Path:
    home = tmp_path_factory.mktemp("hysem_home")
    monkeypatch.setenv("HYSEM_HOME", str(home))
    monkeypatch.setenv("HYSEM_MODELS_DIR", str(shared_models))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    for variable in ("HYSEM_PROFILE", "NCBI_API_KEY", "OPENALEX_API_KEY", "SCOPUS_API_KEY", "HYSEM_MAILTO"):
        monkeypatch.delenv(variable, raising=False)
    for source in ("PUBMED", "OPENALEX", "SCOPUS", "CROSSREF", "UNPAYWALL", "ZOTERO"):
        monkeypatch.delenv(f"HYSEM_{source}_URL", raising=False)
    return home


@pytest.fixture(autouse=True)
def no_instance_state_left_behind() -> Iterator[None]:
    """Each test starts with no Dagster definitions-state storage in context: ``with instance:`` installs its
    instance's and leaves it there on exit, so a later test that loads definitions would meet a disposed one."""
    with set_defs_state_storage(None):
        yield


@pytest.fixture
def realdata() -> Path:
    """The third-party conformance data; missing data fails in CI instead of skipping."""
    if not REALDATA.is_dir():
        message = f"third-party conformance data not found at {REALDATA}"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI runs with ../shared beside the checkout")
        pytest.skip(message)
    return REALDATA


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of config/ that the test may change (queries added, questions edited)."""
    folder = tmp_path / "config"
    shutil.copytree(PROJECT_ROOT / "config", folder)
    monkeypatch.setenv("HYSEM_CONFIG_DIR", str(folder))
    return folder
