"""Run config shown in the README is valid for the job it is meant for."""

from __future__ import annotations

import re

import pytest
import yaml
from dagster import validate_run_config

from hysem_assets.definitions import defs
from hysem_assets_tests.paths import PROJECT_ROOT

#: op name in an example -> the job whose launchpad takes it
JOB_OF_OP = {"qa_answers": "qa_job", "add_query": "add_query_job"}


def run_config_examples() -> list[dict]:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)]
    return [block for block in blocks if isinstance(block, dict) and "ops" in block]


def test_the_readme_shows_run_config_for_each_launchpad_job() -> None:
    assert sorted(op for example in run_config_examples() for op in example["ops"]) == sorted(JOB_OF_OP)


@pytest.mark.parametrize("example", run_config_examples(), ids=lambda example: next(iter(example["ops"])))
def test_a_readme_run_config_example_validates(example: dict) -> None:
    (op,) = example["ops"]
    validate_run_config(defs.resolve_job_def(JOB_OF_OP[op]), example)
