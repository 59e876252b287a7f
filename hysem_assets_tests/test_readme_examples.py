"""Run config shown in the README and the documentation site (docs/) is valid for the job it is meant for."""

from __future__ import annotations

import re

import pytest
import yaml
from dagster import validate_run_config

from hysem_assets.definitions import defs
from hysem_assets_tests.paths import PROJECT_ROOT

#: op name in an example -> the job whose launchpad takes it
JOB_OF_OP = {"qa_answers": "qa_job", "add_query": "add_query_job"}


#: Where run config is shown: the README and every page of the documentation site.
DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]


def run_config_examples() -> list[dict]:
    texts = [document.read_text(encoding="utf-8") for document in DOCUMENTS]
    blocks = [yaml.safe_load(block) for text in texts for block in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)]
    return [block for block in blocks if isinstance(block, dict) and "ops" in block]


def test_the_docs_show_run_config_for_each_launchpad_job() -> None:
    assert sorted(op for example in run_config_examples() for op in example["ops"]) == sorted(JOB_OF_OP)


@pytest.mark.parametrize("example", run_config_examples(), ids=lambda example: next(iter(example["ops"])))
def test_a_documented_run_config_example_validates(example: dict) -> None:
    (op,) = example["ops"]
    validate_run_config(defs.resolve_job_def(JOB_OF_OP[op]), example)


def test_the_readme_names_every_how_to_page() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\(docs/how-to/([\w-]+\.md)\)", readme))
    assert named == {page.name for page in (PROJECT_ROOT / "docs" / "how-to").glob("*.md")}
