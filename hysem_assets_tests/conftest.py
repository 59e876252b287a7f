"""Every test runs with its own HYSEM_HOME, so nothing touches a user's state."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster._core.storage.defs_state.base import set_defs_state_storage
from filelock import FileLock

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


def _as_a_new_user(patch: pytest.MonkeyPatch, home: Path, models: Path) -> None:
    """``home`` as HYSEM_HOME, with none of a user's profile, keys, contact or service addresses."""
    patch.setenv("HYSEM_HOME", str(home))
    patch.setenv("HYSEM_MODELS_DIR", str(models))
    patch.delenv("DAGSTER_HOME", raising=False)
    for variable in ("HYSEM_PROFILE", "NCBI_API_KEY", "OPENALEX_API_KEY", "SCOPUS_API_KEY", "HYSEM_MAILTO"):
        patch.delenv(variable, raising=False)
    for source in ("PUBMED", "OPENALEX", "SCOPUS", "CROSSREF", "UNPAYWALL", "ZOTERO"):
        patch.delenv(f"HYSEM_{source}_URL", raising=False)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, shared_models: Path
) -> Path:
    home = tmp_path_factory.mktemp("hysem_home")
    _as_a_new_user(monkeypatch, home, shared_models)
    return home


@pytest.fixture(scope="session")
def demo_once(tmp_path_factory: pytest.TempPathFactory, shared_models: Path) -> Path:
    """The HYSEM_HOME ``hysem demo`` leaves, made once for the whole run by whichever worker asks first (it
    is the slowest command there is); tests read copies of it (:func:`demo_home`)."""
    from click.testing import CliRunner

    from hysem_assets.cli import main

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common folder
    home, done = shared / "demo-home", shared / "demo-home.done"
    with FileLock(shared / "demo-home.lock"):
        if not done.is_file():
            shutil.rmtree(home, ignore_errors=True)
            with pytest.MonkeyPatch.context() as patch:
                _as_a_new_user(patch, home, shared_models)
                patch.delenv("HYSEM_CONFIG_DIR", raising=False)
                ran = CliRunner().invoke(main, ["demo"])
            assert ran.exit_code == 0, ran.output
            done.touch()
    return home


@pytest.fixture(scope="module")
def demo_home(demo_once: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's HYSEM_HOME for one module, whose tests may write into it."""
    home = tmp_path_factory.mktemp("demo") / "hysem"
    shutil.copytree(demo_once, home, symlinks=True)
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
