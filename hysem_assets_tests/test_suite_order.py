"""The slow modules the suite starts first exist, and the documentation lists the same ones."""

from __future__ import annotations

import re

from hysem_assets_tests.conftest import SLOW_FIRST
from hysem_assets_tests.paths import PROJECT_ROOT


def test_the_slow_modules_exist_and_are_the_ones_the_docs_list() -> None:
    root = PROJECT_ROOT / "hysem_assets_tests"
    assert all((root / module).is_file() for module in SLOW_FIRST)
    page = (PROJECT_ROOT / "docs" / "reference" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("### How the suite is organised", 1)[1]
    listed = set(re.findall(r"^\| `([\w/]+\.py)`(?:, `([\w/]+\.py)`)? \|", table, flags=re.MULTILINE))
    assert {module for pair in listed for module in pair if module} == set(SLOW_FIRST)
