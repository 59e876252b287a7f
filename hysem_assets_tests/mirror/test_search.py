"""The query evaluator on its own: each source's syntax, read loosely, against hand-made records."""

from __future__ import annotations

import logging

import pytest

from hysem_assets.mirror.search import (
    And,
    Document,
    Ignored,
    Not,
    Or,
    QuerySyntaxError,
    Term,
    compile_query,
    evaluate,
    fold,
    openalex_filter_query,
    parse_query,
    simplify,
    stem,
    terms,
    words,
)

RECORD = Document.build(
    title="Statin use and cognitive decline in Alzheimer's disease: a cohort of non-users and users",
    abstract=(
        "We followed 1,234 community-dwelling women for a median follow-up of 6.2 years. "
        "PM2.5 was not measured. Hazard ratios compared HMG-CoA reductase inhibitor users with nonusers."
    ),
    keywords=["hypercholesterolaemia", "memory clinics"],
    mesh=["Dementia, Vascular", "Vascular Dementia", "Humans"],
    authors=["Gómez-Herrera María José MJ M J", "Ødegaard Ingrid I I"],
    journal="Journal of Neuropharmacoepidemiology",
    types=["Journal Article", "Observational Study"],
)
OTHER = Document.build(title="Ozone and myocardial infarction", abstract="A time-series study of ozone in Madrid.")


def selects(query: str, dialect: str, document: Document = RECORD) -> bool:
    compiled = compile_query(query, dialect)
    assert compiled.problem is None, compiled.problem
    return compiled.matches(document)


# ----------------------------------------------------------------------------- normalisation


def test_fold_and_words_drop_case_accents_possessives_and_punctuation() -> None:
    assert fold("Alzheimer’s Ødegaard Weiß") == "alzheimer odegaard weiss"
    assert words("Non-users' PM2.5, follow-up") == ["non", "users", "pm2", "5", "follow", "up"]


@pytest.mark.parametrize(
    ("one", "other"),
    [("statin", "statins"), ("study", "studies"), ("disease", "diseases"), ("modelling", "model"), ("box", "boxes")],
)
def test_stemming_makes_simple_variants_meet(one: str, other: str) -> None:
    assert stem(one) == stem(other)


def test_stemming_leaves_short_words_and_numbers_alone() -> None:
    assert [stem(word) for word in ("ms", "hr", "2015", "pm2")] == ["ms", "hr", "2015", "pm2"]


# ----------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    "query",
    [
        "statins",  # plural against singular
        '"cognitive decline"',  # phrase
        "nonusers",  # run together against hyphenated
        '"non users"',  # spaced against hyphenated
        '"follow up"',
        "followup",
        "alzheimer",  # possessive dropped
        '"Alzheimer disease"',
        "STATIN",  # case
        "hypercholesterolaemia",
        '"HMG-CoA reductase inhibitors"',  # plural inside a phrase
        "pm2.5",
    ],
)
def test_words_and_phrases_match_after_normalisation(query: str) -> None:
    assert selects(query, "openalex")


def test_a_phrase_needs_its_words_in_order_and_within_one_passage() -> None:
    assert not selects('"decline cognitive"', "openalex")
    assert not selects('"clinics hypercholesterolaemia"', "openalex")  # two keywords, not one phrase


def test_wildcards() -> None:
    assert selects("stat*[tiab]", "pubmed")
    assert selects("TITLE-ABS-KEY(wom?n)", "scopus")
    assert selects("wom?n", "openalex")
    assert not selects("wom?n[tiab]", "pubmed")  # PubMed knows only the trailing *
    assert selects('"HMG-CoA reductase inhib*"', "openalex")
    assert not selects("cardio*", "openalex")


def test_neutral_clauses_neither_keep_nor_drop() -> None:
    assert evaluate(Ignored("2020[dp]"), RECORD) is None
    assert evaluate(Not(Ignored("x")), RECORD) is None
    assert evaluate(And((Ignored("x"), Term("zzz", ("zzz",)))), RECORD) is False
    assert evaluate(Or((Ignored("x"), Term("statin", ("statin",)))), RECORD) is True
    assert compile_query("", "pubmed").matches(OTHER)  # no query: everything
    assert compile_query("2015:2020[dp]", "pubmed").matches(OTHER)


# ----------------------------------------------------------------------------- PubMed


def test_pubmed_tags_choose_fields() -> None:
    assert selects("statin[ti]", "pubmed")
    assert not selects("women[ti]", "pubmed") and selects("women[tiab]", "pubmed")
    assert selects("memory clinics[tiab]", "pubmed")  # [tiab] includes author keywords
    assert not selects("statin[ab]", "pubmed") and selects("inhibitor[ab]", "pubmed")
    assert selects('"vascular dementia"[MeSH Terms]', "pubmed")
    assert selects("humans[mh]", "pubmed") and not selects("humans[tiab]", "pubmed")
    assert selects("observational study[pt]", "pubmed") and not selects("review[pt]", "pubmed")
    assert selects("neuropharmacoepidemiology[ta]", "pubmed")


def test_pubmed_author_tags_match_names_and_initials_in_any_form() -> None:
    assert selects("Gomez-Herrera MJ[au]", "pubmed")
    assert selects("gómez-herrera m j[Author]", "pubmed")
    assert selects("Odegaard I[au]", "pubmed")
    assert not selects("Gomez-Herrera I[au]", "pubmed")  # the parts must belong to one person
    assert not selects("statin[au]", "pubmed")


def test_pubmed_untagged_words_are_and_ed_and_a_tagged_run_is_a_phrase() -> None:
    assert selects("statin dementia", "pubmed")
    assert not selects("statin dementia[ti]", "pubmed")  # "statin dementia" is no phrase of the title
    assert selects("cognitive decline[ti]", "pubmed")
    assert not selects("statin ozone", "pubmed")


def test_pubmed_operators_run_left_to_right() -> None:
    # (statin OR ozone) AND zzz: false; statin OR (ozone AND zzz) would be true
    assert not selects("statin OR ozone AND zzz", "pubmed")
    assert selects("statin OR (ozone AND zzz)", "pubmed")
    assert not selects("statin NOT dementia", "pubmed")
    assert selects("statin NOT ozone", "pubmed")
    assert selects("statin and dementia", "pubmed")  # lower-case "and" is a stop word, not an operator
    assert not selects("zzz or statin", "pubmed")


def test_pubmed_date_and_language_limits_are_neutral() -> None:
    assert selects('statin AND ("2015/01/01"[PDAT] : "2025/12/31"[PDAT]) AND english[la]', "pubmed")
    assert selects("statin AND 2015:2020[dp]", "pubmed")


# ----------------------------------------------------------------------------- Scopus


def test_scopus_field_codes() -> None:
    assert selects("TITLE-ABS-KEY(statin* AND dementia)", "scopus")
    assert selects("TITLE(cognitive)", "scopus") and not selects("TITLE(women)", "scopus")
    assert selects("ABS(women)", "scopus") and not selects("ABS(alzheimer)", "scopus")
    assert selects("KEY(memory)", "scopus") and selects("AUTHKEY(memory clinics)", "scopus")
    assert selects("AUTHOR-NAME(gomez-herrera)", "scopus") and selects("AUTH(odegaard)", "scopus")
    assert selects("SRCTITLE(neuropharmacoepidemiology)", "scopus")
    assert selects("TITLE-ABS-KEY(statin) AND PUBYEAR > 2014 AND PUBYEAR < 2026", "scopus")
    assert selects("TITLE-ABS-KEY(statin) AND LIMIT-TO(DOCTYPE, ar) AND LANGUAGE(english)", "scopus")


def test_scopus_operators_and_precedence() -> None:
    assert not selects("TITLE-ABS-KEY(statin) AND NOT TITLE(cognitive)", "scopus")
    assert selects("TITLE-ABS-KEY(statin) AND NOT TITLE(ozone)", "scopus")
    # OR binds before AND: statin AND (zzz OR cognitive)
    assert selects("TITLE-ABS-KEY(statin AND zzz OR cognitive)", "scopus")
    assert selects("TITLE-ABS-KEY(statin W/3 dementia)", "scopus") and selects("TITLE(statin PRE/2 use)", "scopus")
    assert selects("TITLE-ABS-KEY(statin and dementia)", "scopus")  # Scopus operators in any case


def test_scopus_exact_and_loose_phrases() -> None:
    assert selects("{non-users}", "scopus") and selects('"non users"', "scopus")
    assert selects('TITLE-ABS-KEY("statins use")', "scopus")  # loose phrase: stemmed
    assert not selects("TITLE-ABS-KEY({statins use})", "scopus")  # exact phrase: not stemmed


# ----------------------------------------------------------------------------- OpenAlex


def test_openalex_words_are_and_ed_with_boolean_operators_in_capitals() -> None:
    assert selects("statin dementia women", "openalex")
    assert not selects("statin ozone", "openalex")
    assert selects("statin OR ozone", "openalex")
    assert selects("(statin AND women) NOT (ozone OR madrid)", "openalex")
    assert not selects("statin NOT women", "openalex")
    assert selects("the statin of women", "openalex")  # stop words ignored
    assert not selects("statin or ozone", "openalex")  # lower case: words, and "ozone" is absent


def test_openalex_search_filters_choose_fields_alternatives_and_negation() -> None:
    title = openalex_filter_query("title.search", "statin")
    assert title is not None and title.matches(RECORD)
    assert not openalex_filter_query("abstract.search", "statin").matches(RECORD)  # type: ignore[union-attr]
    assert openalex_filter_query("title_and_abstract.search", "women").matches(RECORD)  # type: ignore[union-attr]
    assert openalex_filter_query("default.search", "memory clinics").matches(RECORD)  # type: ignore[union-attr]
    assert openalex_filter_query("title.search", "ozone|statin").matches(RECORD)  # type: ignore[union-attr]
    assert not openalex_filter_query("title.search", "!statin").matches(RECORD)  # type: ignore[union-attr]
    assert not openalex_filter_query("title.search.no_stem", "statins").matches(RECORD)  # type: ignore[union-attr]
    assert openalex_filter_query("is_oa", "true") is None


# ----------------------------------------------------------------------------- trees and fallbacks


def test_parse_gives_a_tree_and_simplify_drops_neutral_clauses() -> None:
    tree = parse_query("(statin OR atorvastatin) AND dementia", "openalex")
    assert tree == And((Or((Term("", ("statin",)), Term("", ("atorvastatin",)))), Term("", ("dementia",))))
    assert [term.words for term in terms(tree)] == [("statin",), ("atorvastatin",), ("dementia",)]
    dated = compile_query("TITLE-ABS-KEY(statin AND dementia) AND PUBYEAR > 2014 AND PUBYEAR < 2026", "scopus")
    plain = compile_query("TITLE-ABS-KEY( statin AND dementia )", "scopus")
    assert simplify(dated.node) == simplify(plain.node) != simplify(compile_query("TITLE(statin)", "scopus").node)


@pytest.mark.parametrize(
    ("query", "dialect"),
    [
        ("(statin AND (women OR zzz)", "pubmed"),
        ("statin AND", "openalex"),
        ('"statin dementia', "openalex"),
        ("TITLE-ABS-KEY(statin))", "scopus"),
        ("statin[tiab", "pubmed"),
        ("{statin", "scopus"),
        ("OR statin", "openalex"),
    ],
)
def test_an_unparseable_query_falls_back_to_the_and_of_its_words_and_says_so(
    query: str, dialect: str, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(QuerySyntaxError):
        parse_query(query, dialect)  # type: ignore[arg-type]
    compile_query.cache_clear()
    with caplog.at_level(logging.WARNING, logger="hysem_assets.mirror.search"):
        compiled = compile_query(query, dialect)  # type: ignore[arg-type]
    assert compiled.problem and "does not parse" in caplog.text and query in caplog.text
    assert all(isinstance(term, Term) for term in terms(compiled.node))
    assert compiled.matches(RECORD) is ("zzz" not in query)
    assert not compiled.matches(OTHER)


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown query dialect"):
        parse_query("statin", "embase")  # type: ignore[arg-type]
