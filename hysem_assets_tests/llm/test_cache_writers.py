"""Model answers reach their cache through one door: the wrapper that checks each answer first."""

from __future__ import annotations

import ast

from hysem_assets_tests.paths import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "hysem_assets"
#: Where the answer cache may be named: its definition, the wrapper that validates before it writes, and
#: the registry that hands a cache to that wrapper.
ALLOWED = {"llm/cache.py", "llm/cached.py", "llm/registry.py"}


def test_only_the_validating_wrapper_and_its_builder_touch_the_answer_cache():
    naming = set()
    for module in PACKAGE.rglob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        if "ResponseCache" in names:
            naming.add(module.relative_to(PACKAGE).as_posix())
    assert naming <= ALLOWED, naming - ALLOWED
    cached = ast.parse((PACKAGE / "llm" / "cached.py").read_text(encoding="utf-8"))
    puts = [node for node in ast.walk(cached) if isinstance(node, ast.Attribute) and node.attr == "put"]
    assert len(puts) == 1  # the one write, after the answer was checked against its schema
