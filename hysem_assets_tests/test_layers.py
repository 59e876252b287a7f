"""The package's layers hold: ``lint-imports`` passes on the code, and fails on an upward or sideways import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hysem_assets_tests.paths import PROJECT_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the project's contract, on the package found under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_package(target: Path) -> Path:
    shutil.copy(PROJECT_ROOT / "pyproject.toml", target / "pyproject.toml")
    shutil.copytree(
        PROJECT_ROOT / "hysem_assets",
        target / "hysem_assets",
        ignore=shutil.ignore_patterns("*.onnx", "sample", "snapshots", "__pycache__"),
    )
    return target


def test_the_code_keeps_its_layers(tmp_path):
    result = lint_imports(copy_package(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract_and_is_named(tmp_path):
    root = copy_package(tmp_path)
    text = root / "hysem_assets" / "core" / "text.py"
    text.write_text(text.read_text() + "\nfrom hysem_assets.defs import partitions  # noqa: E402\n")
    result = lint_imports(root)
    assert result.returncode != 0
    assert "hysem_assets.core.text -> hysem_assets.defs.partitions" in result.stdout


@pytest.mark.parametrize(
    ("stage", "module", "imported"),
    [
        ("pico", "roles", "hysem_assets.knowledge.mentions"),  # a lower stage layer reaching up
        ("llm", "backend", "hysem_assets.retrieval.search"),  # two independent stages of one layer
    ],
)
def test_a_sideways_import_between_stages_breaks_the_contract_and_is_named(tmp_path, stage, module, imported):
    root = copy_package(tmp_path)
    source = root / "hysem_assets" / stage / f"{module}.py"
    source.write_text(source.read_text() + f"\nimport {imported}  # noqa: E402\n")
    result = lint_imports(root)
    assert result.returncode != 0
    assert f"hysem_assets.{stage}.{module} -> {imported}" in result.stdout
