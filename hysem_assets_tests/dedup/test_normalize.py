from __future__ import annotations

import math

import pytest

from hysem_assets.core.identifiers import doi_work_key
from hysem_assets.dedup.normalize import (
    is_missing,
    journals_agree,
    normalize_journal,
    normalize_pages,
    normalize_title,
    normalize_volume,
    notice_kind,
    parse_year,
    split_authors,
    surname,
    title_numbers,
    title_variants,
    venue_kind,
)

PNAS = "Proceedings of the National Academy of Sciences of the United States of America"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Effects of <i>Helicobacter</i> on H<sub>2</sub>O.", "effects of helicobacter on h 2 o"),
        ("<jats:title>Müller cells &amp; the retina</jats:title>", "muller cells and the retina"),
        ("Risk of <mml:math><mml:mi>β</mml:mi></mml:math>-blockers", "risk of beta blockers"),
        ("Double &amp;amp; escaped &lt;b&gt;bold&lt;/b&gt;", "double and escaped bold"),
        ("[Study of tuberculous pleurisy in children].", "study of tuberculous pleurisy in children"),
        ("  THE   Café-Society\u2019s  Non–small  Cell ", "the cafe societys non small cell"),
        ("HPV testing after CIN 3: a review. [Review] [45 refs]", "hpv testing after cin 3 a review"),
        ("HPV16 load.[Erratum appears in J Clin Virol. 2006;37(2):137]", "hpv16 load"),
        ("Meta-analysis of screening (Provisional abstract)", "meta analysis of screening"),
        ("RETRACTED: Vaccines and autism", "vaccines and autism"),
        ("UNKNOWN", ""),
        (None, ""),
        (float("nan"), ""),
    ],
)
def test_normalize_title(raw, expected):
    assert normalize_title(raw) == expected


def test_title_variants_split_bilingual_titles_into_language_versions():
    variants = title_variants(
        "Utilidad de los antimicrobianos en la toracostomía cerrada por trauma; "
        "Are antimicrobials useful in closed thoracostomy due to trauma?"
    )
    assert "are antimicrobials useful in closed thoracostomy due to trauma" in variants
    english = title_variants(
        "[Neoadjuvant chemotherapy in stage III lung carcinoma] <ORIGINAL> Neoadjuvante Chemotherapie"
    )
    assert english[1] == "neoadjuvant chemotherapy in stage iii lung carcinoma"
    assert title_variants("Short; two parts") == ("short two parts",)


@pytest.mark.parametrize(
    ("title", "item_type", "kind"),
    [
        ("Erratum: Reputation offsets trust judgments", None, "erratum"),
        ("Correction to: Reputation offsets trust judgments", None, "erratum"),
        ("Corrigendum to “Reputation offsets”", None, "erratum"),
        ("Comment on 'Reputation offsets trust judgments'", None, "comment"),
        ("Re: Reputation offsets trust judgments", None, "comment"),
        ("Reply to Smith et al.", None, "reply"),
        ("Author's reply", None, "reply"),
        ("Retraction notice to: Reputation offsets", None, "retraction"),
        ("Reputation offsets trust judgments", "erratum", "erratum"),
        ("Reputation offsets trust judgments", "Published Erratum", "erratum"),
        ("Reputation offsets trust judgments", "journal-article", ""),
        ("Correction of scoliosis in adolescents", None, ""),
        ("RETRACTED: Reputation offsets trust judgments", None, ""),
    ],
)
def test_notice_kind(title, item_type, kind):
    assert notice_kind(title, item_type) == kind


def test_title_numbers_tell_series_and_phases_apart():
    assert title_numbers("guideline 2019 update") != title_numbers("guideline 2021 update")
    assert title_numbers("a phase i trial of x") == {"1"}
    assert title_numbers("a phase ii trial of x") == {"2"}
    assert title_numbers("among 10 000 women") == title_numbers("among 10000 women")
    assert title_numbers("vitamin d in pregnancy") == frozenset()


@pytest.mark.parametrize(
    ("authors", "surnames"),
    [
        ("Abrahao, Bruno and Parigi, Paolo and Cook, Karen S.", ["Abrahao", "Parigi", "Cook"]),
        ("B. Abrahao; P. Parigi; K. S. Cook", ["Abrahao", "Parigi", "Cook"]),
        ("Tan A.Schulze A.O'Donnell C. P.Davis P. G.", ["Tan", "Schulze", "O'Donnell", "Davis"]),
        ("Zuna RE, Wang SS, Schiffman M", ["Zuna", "Wang", "Schiffman"]),
        ("Zuna, R.E., Wang, S.S., Schiffman, M.", ["Zuna", "Wang", "Schiffman"]),
        ("Heather Piwowar and Ludwig van Beethoven", ["Piwowar", "van Beethoven"]),
        ("van der Berg JP", ["van der Berg"]),
        ("Smith, John", ["Smith"]),
        (["Müller, Jürgen", "Doe, J"], ["Müller", "Doe"]),
        ("UNKNOWN", []),
        ("Anonymous and Smith, J.", ["Smith"]),
        (None, []),
    ],
)
def test_split_authors_and_surname(authors, surnames):
    assert [surname(name) for name in split_authors(authors)] == surnames


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ("288-297", "288-297"),
        ("288-97", "288-297"),
        ("pp. 288--297", "288-297"),
        ("288–297", "288-297"),
        ("e0123", "e123"),
        ("Cd002273", "cd2273"),
        ("S376-S387", "s376-s387"),
        ("1324", "1324"),
        ("2243-5; author reply 2243-5", "2243-2245"),
        ("Suppl-48", None),
        ("no pagination", None),
        (None, None),
    ],
)
def test_normalize_pages(pages, expected):
    assert normalize_pages(pages) == expected


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("Curr Opin Lipidol", "Current opinion in lipidology", True),
        ("Am J Respir Crit Care Med", "American Journal of Respiratory and Critical Care Medicine", True),
        ("Proc Natl Acad Sci U S A", PNAS, True),
        ("The Lancet", "Lancet (London, England)", True),
        ("Clinical & Experimental Pharmacology", "Clinical and experimental pharmacology", True),
        ("Stroke", "Stroke; a journal of cerebral circulation", True),
        ("Aizheng", "Ai zheng = Aizheng = Chinese journal of cancer", True),
        ("Langenbecks Arch Surg", "Langenbeck's Archives of Surgery", True),
        ("BMJ", "British Medical Journal", True),
        ("Cancer", "Cancer Research", False),
        ("Journal of Digital Studies", "Workshop of Digital Studies", False),
        ("Lung Cancer", "Chest", False),
    ],
)
def test_journals_agree(a, b, agree):
    assert journals_agree(normalize_journal(a), normalize_journal(b)) is agree


@pytest.mark.parametrize(
    ("journal", "item_type", "kind"),
    [
        ("Journal of Digital Studies", "article", "journal"),
        ("Workshop of Digital Studies", "article", "conference"),
        ("AMCIS 2017 Proceedings", None, "conference"),
        ("Proceedings of the National Academy of Sciences", "article", "journal"),
        ("Americas Conference on Information Systems", "article", "conference"),
        (None, "inproceedings", "conference"),
        ("medRxiv", "article", "preprint"),
        (None, "posted-content", "preprint"),
        (None, "misc", ""),
    ],
)
def test_venue_kind(journal, item_type, kind):
    assert venue_kind(normalize_journal(journal), item_type) == kind


def test_small_value_parsers():
    assert parse_year("2017/05/01") == 2017 and parse_year(2017.0) == 2017 and parse_year("n.d.") is None
    assert normalize_volume("4 (1) (no pagination)") == "4" and normalize_volume(None) is None
    assert is_missing(math.nan) and is_missing("  ") and is_missing([]) and not is_missing(["x"])


def test_doi_work_key_drops_version_and_landing_page_suffixes():
    assert doi_work_key("10.1002/14651858.CD002273.pub2") == doi_work_key("10.1002/14651858.cd002273.pub3")
    assert doi_work_key("https://doi.org/10.1111/ABC.123/abstract") == "10.1111/abc.123"
    assert doi_work_key("10.1161/STROKEAHA.110.5 [doi]; S0039 [pii]") == "10.1161/strokeaha.110.5"
    assert doi_work_key("n/a") is None
