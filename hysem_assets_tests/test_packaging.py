"""The code location loads from an installed wheel, away from the source checkout: bundled
config, profiles and step tags travel as package data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hysem_assets_tests.paths import PROJECT_ROOT


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    completed = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed


def test_the_wheel_validates_from_another_folder(tmp_path: Path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(PROJECT_ROOT),
        ]
    )
    [wheel] = wheels.glob("hysem-*.whl")
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)])
    env = {
        **os.environ,
        "PYTHONPATH": str(target),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "HYSEM_HOME": str(tmp_path / "home"),
    }
    env.pop("HYSEM_CONFIG_DIR", None)
    (tmp_path / "dagster").mkdir()
    located = run(
        [
            sys.executable,
            "-c",
            "import hysem_assets.settings.environment as e; print(e.__file__); print(e.config_dir())",
        ],
        cwd=elsewhere,
        env=env,
    ).stdout.split()
    assert located[0].startswith(str(target)) and (Path(located[1]) / "queries.yaml").is_file()
    validated = run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-m", "hysem_assets.definitions"],
        cwd=elsewhere,
        env=env,
    )
    assert "Validation successful" in validated.stdout + validated.stderr
