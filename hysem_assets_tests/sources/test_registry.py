"""The source registry is the one place that names a source."""

import ast
from pathlib import Path

import pytest
from dagster import AssetKey

import hysem_assets
from hysem_assets.definitions import defs
from hysem_assets.sources.registry import BY_NAME, REGISTRY, Kind, mirrored, of_kind, record_sources, searched

PACKAGE = Path(hysem_assets.__file__).parent
#: Where sources live: their clients and parsers, and the mirror that serves their formats.
ALLOWED = ("sources", "mirror")
SAMPLE = PACKAGE / "sample"


def _names_in(path: Path, names: set[str], root: Path = PACKAGE) -> list[str]:
    """Lines of ``path`` where a string constant or an identifier is exactly a source's name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = {node.value}
        elif isinstance(node, ast.Name):
            words = {node.id}
        elif isinstance(node, ast.arg):
            words = {node.arg}
        elif isinstance(node, ast.Attribute):
            words = {node.attr}
        elif isinstance(node, ast.keyword):
            words = {node.arg or ""}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            words = {node.name}
        else:
            continue
        found += [f"{path.relative_to(root)}:{node.lineno}: {word}" for word in words & names]
    return found


def test_no_module_outside_sources_and_mirror_names_a_searched_source() -> None:
    names = set(searched())
    modules = [path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in ALLOWED]
    assert len(modules) > 100
    assert [hit for path in sorted(modules) for hit in _names_in(path, names)] == []


def test_the_check_finds_a_name_where_one_is_written(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text('SOURCE = "pubmed"\n\ndef fetch(scopus):\n    return scopus\n', encoding="utf-8")
    hits = _names_in(planted, set(searched()), tmp_path)
    assert sorted(hit.rsplit(": ", 1)[1] for hit in hits) == ["pubmed", "scopus", "scopus"]


def test_every_record_source_has_a_raw_metadata_asset_and_feeds_dedup_and_prisma() -> None:
    graph = defs.resolve_asset_graph()
    raw = {key.path[1] for key in graph.get_all_asset_keys() if key.path[0] == "raw_metadata"}
    assert raw == set(record_sources())
    for asset in ("deduped_corpus", "prisma_flow"):
        parents = {key.path[1] for key in graph.get(AssetKey([asset])).parent_keys if key.path[0] == "raw_metadata"}
        assert parents == raw, asset


@pytest.mark.parametrize("entry", of_kind(Kind.SEARCH), ids=lambda entry: entry.name)
def test_a_searched_source_declares_what_a_search_needs(entry) -> None:
    assert entry.search is not None and entry.probe is not None and entry.base_url.startswith("https://")
    assert entry.description and entry.label
    assert entry.name in mirrored() and (SAMPLE / entry.name).is_dir(), "a mirror snapshot of the sample"


def test_names_are_unique_and_merge_ranks_order_the_record_sources() -> None:
    assert len(BY_NAME) == len(REGISTRY)
    ranks = [BY_NAME[name].authority for name in record_sources()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
