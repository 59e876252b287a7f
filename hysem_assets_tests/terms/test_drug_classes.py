"""Drug classes meet their members through the stems of nonproprietary names, and nothing else."""

import pytest

from hysem_assets.terms.drug_classes import class_stems, names_member


@pytest.mark.parametrize(
    ("asked", "named", "member"),
    [
        ("statins", "atorvastatin 40 mg", True),
        ("Statin", "Rosuvastatin", True),
        ("statins", "nystatin", False),
        ("beta blockers", "metoprolol succinate", True),
        ("beta-blockers", "carvedilol", True),
        ("ACE inhibitors", "ramipril", True),
        ("proton pump inhibitors", "omeprazole 20 mg", True),
        ("SGLT2 inhibitors", "empagliflozin", True),
        ("monoclonal antibodies", "adalimumab", True),
        ("statins", "placebo", False),
    ],
)
def test_a_class_meets_the_drugs_named_with_its_stem(asked, named, member):
    assert names_member(named, class_stems(asked)) is member


def test_a_word_that_names_no_drug_class_has_no_stems():
    assert class_stems("aspirin") == ()
    assert class_stems("statin therapy") == ()
    assert not names_member("atorvastatin", ())
