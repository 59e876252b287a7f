"""Evidence Inference read as the shared folder holds it: majority labels, splits by article, prompts files."""

from pathlib import Path

import pytest

from hysem_assets.findings.corpus import Labelled, Prompt, labelled, majority, read_prompts, split
from hysem_assets.findings.schema import DECREASED, INCREASED, NO_DIFFERENCE
from hysem_assets_tests.paths import REALDATA, needs_realdata


def test_the_majority_label_wins_and_a_tie_is_no_difference():
    assert majority([INCREASED, INCREASED, NO_DIFFERENCE]) == INCREASED
    assert majority([INCREASED, DECREASED]) == INCREASED  # a tie without "no difference": the first direction
    assert majority([DECREASED, NO_DIFFERENCE]) == NO_DIFFERENCE


def test_splits_are_by_article_and_repeatable():
    items = [Labelled(Prompt(str(i), str(i % 20), "a", "b", "c"), INCREASED, ()) for i in range(100)]
    kept, apart = split(items, 0.25, 7)
    assert {i.prompt.pmcid for i in kept}.isdisjoint({i.prompt.pmcid for i in apart})
    assert len({i.prompt.pmcid for i in apart}) == 5
    assert split(items, 0.25, 7) == (kept, apart)
    assert split(items, 0.25, 8) != (kept, apart)


def test_a_prompts_file_without_a_column_is_refused_naming_it(tmp_path: Path):
    path = tmp_path / "prompts.csv"
    path.write_text("PromptID,PMCID,Outcome,Intervention\n1,2,x,y\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"prompts.csv: no column Comparator"):
        read_prompts(path)


@needs_realdata
def test_the_shared_corpus_reads_with_labels_and_evidence_inside_the_articles():
    folder = REALDATA / "evidence_inference"
    items = labelled(folder)
    assert len(items) > 2000
    assert {item.label for item in items} == {INCREASED, DECREASED, NO_DIFFERENCE}
    item = items[0]
    text = (folder / "txt" / f"PMC{item.prompt.pmcid}.txt").read_text(encoding="utf-8")
    start, end, _ = item.evidence[0]
    assert 0 <= start < end <= len(text)
