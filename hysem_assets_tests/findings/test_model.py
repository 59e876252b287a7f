"""The shipped findings model: checked against its card at load, and judging comparisons as a reviewer would."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import f1_score

from hysem_assets.cli import main
from hysem_assets.findings.candidates import sentences
from hysem_assets.findings.classifier import (
    CARD_FILE,
    MODEL_DIR,
    PARTS,
    Comparison,
    FindingsModel,
    FindingsModelUnavailable,
    load,
)
from hysem_assets.findings.evaluation import label_scores
from hysem_assets.findings.schema import DECREASED, DIRECTIONS, INCREASED, NO_DIFFERENCE
from hysem_assets_tests.paths import REALDATA, needs_realdata

TRIAL = """TITLE:
Ginger for nausea and vomiting in early pregnancy: a randomised trial

ABSTRACT.METHODS:
We randomly assigned 120 pregnant women with nausea to ginger capsules or placebo for four days.

ABSTRACT.RESULTS:
The nausea score was significantly lower with ginger than with placebo (mean difference -1.9, 95% CI -2.8 to -1.0; p < 0.001).
The number of vomiting episodes did not differ significantly between the ginger and placebo groups (p = 0.42).
Heartburn was reported significantly more often with ginger than with placebo (12% versus 3%, p = 0.03).
"""


def test_a_comparison_is_judged_from_the_sentence_that_states_it():
    model = load()
    article = sentences(TRIAL)
    asked = [
        Comparison("ginger", "placebo", "nausea score"),
        Comparison("ginger", "placebo", "vomiting episodes"),
        Comparison("ginger", "placebo", "heartburn"),
    ]
    judged = model.judge(asked, article)
    assert [j.direction for j in judged] == [DECREASED, NO_DIFFERENCE, INCREASED]
    assert "nausea score" in judged[0].evidence.text and "vomiting" in judged[1].evidence.text
    assert "Heartburn" in judged[2].evidence.text
    assert all(j.found and 0.0 <= j.confidence <= 1.0 for j in judged)


def test_an_article_with_no_sentence_has_no_judgement():
    assert load().judge([Comparison("a", "b", "c")], []) == [None]


def test_weights_damaged_in_place_are_refused_naming_the_file_and_the_fix(tmp_path: Path):
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    weights = folder / PARTS["direction"]
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    recorded = json.loads((folder / CARD_FILE).read_text())["sha256"]["direction"]
    found = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(FindingsModelUnavailable) as error:
        FindingsModel(folder)
    assert str(error.value) == (
        f"the findings model's {weights} does not match its model card: sha256 {found[:12]}, the card records "
        f"{recorded[:12]}; rebuild it with `make findings-model`, or reinstall hysem"
    )


def test_missing_weights_or_card_fail_in_one_line(tmp_path: Path):
    with pytest.raises(FindingsModelUnavailable, match=r"card .*findings.json cannot be read.*make findings-model"):
        FindingsModel(tmp_path)
    shutil.copy(MODEL_DIR / CARD_FILE, tmp_path / CARD_FILE)
    with pytest.raises(FindingsModelUnavailable, match=r"cannot be loaded from .*evidence.onnx.*make findings-model"):
        FindingsModel(tmp_path)


def test_macro_f1_is_scikit_learns():
    gold = [INCREASED, DECREASED, NO_DIFFERENCE, NO_DIFFERENCE, INCREASED, DECREASED, NO_DIFFERENCE]
    said = [INCREASED, NO_DIFFERENCE, NO_DIFFERENCE, INCREASED, INCREASED, DECREASED, DECREASED]
    assert label_scores(gold, said)["macro_f1"] == pytest.approx(
        f1_score(gold, said, labels=list(DIRECTIONS), average="macro"), abs=1e-4
    )


@needs_realdata
def test_classify_answers_every_prompt_and_names_a_missing_article(tmp_path: Path):
    source = REALDATA / "evidence_inference"
    lines = (source / "prompts.csv").read_text(encoding="utf-8").splitlines()
    prompts = tmp_path / "prompts.csv"
    prompts.write_text("\n".join([*lines[:4], "1,999999999,Pain,Drug,Placebo"]) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        main, ["findings", "classify", str(prompts), "--articles", str(source / "txt"), "-o", str(output)]
    )
    assert result.exit_code == 1
    assert "prompt 1: no article" in result.output and "PMC999999999.txt" in result.output
    answers = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [a["PromptID"] for a in answers] == [line.split(",")[0] for line in lines[1:4]]
    article = (source / "txt" / f"PMC{lines[1].split(',')[1]}.txt").read_text(encoding="utf-8")
    for answer in answers:
        assert answer["label"] in DIRECTIONS
        assert " ".join(answer["evidence"].split())[:60] in " ".join(article.split())
