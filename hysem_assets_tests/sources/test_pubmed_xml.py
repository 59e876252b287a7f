"""PubMed E-utilities XML parsing, checked against real efetch/esearch responses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.core.records import CORE_COLUMNS
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.pubmed_xml import ESearchResult, parse_efetch, parse_esearch
from hysem_assets_tests.paths import REALDATA, needs_realdata

EFETCH_DIR = REALDATA / "pubmed_metapub_efetch"
ENTREZ_DIR = REALDATA / "pubmed_biopython_entrez"
EFETCH_FILES = sorted(EFETCH_DIR.glob("*.xml")) + sorted(ENTREZ_DIR.glob("pubmed*.xml"))


def fetch_one(path: Path) -> dict:
    records = parse_efetch(path.read_bytes(), where=path.name)
    assert len(records) == 1
    return records[0]


# --- conformance: real efetch responses -------------------------------------------------


def test_the_real_efetch_corpus_is_there() -> None:  # the guard: never skipped
    assert len(EFETCH_FILES) >= 80


@needs_realdata
@pytest.mark.parametrize("path", EFETCH_FILES, ids=lambda path: path.name)
def test_every_real_efetch_file_parses_into_complete_records(path: Path) -> None:
    records = parse_efetch(path.read_bytes(), where=path.name)

    for record in records:
        assert tuple(record) == CORE_COLUMNS
        assert record["source"] == "pubmed"
        assert record["pmid"] == record["source_id"] and record["pmid"].isdigit()
        assert record["title"] and record["year"] and record["journal"]
        assert record["raw"].startswith("<PubmedArticle") and record["pmid"] in record["raw"]
        types = record["publication_types"].split("; ") if record["publication_types"] else []
        assert len(types) == record["raw"].count("<PublicationType ")
    if path.parent == EFETCH_DIR and path.stem != "37909814":
        assert [record["pmid"] for record in records] == [path.stem]


@needs_realdata
def test_published_erratum_with_unicode_names() -> None:
    record = fetch_one(EFETCH_DIR / "38833988.xml")

    assert record["item_type"] == "erratum"
    assert record["publication_types"] == "Published Erratum"
    assert record["title"].startswith('Corrigendum to "MageC2 protein is upregulated')
    # the corrected article's DOI (in CommentsCorrections) must not be taken
    assert record["doi"] == "10.1016/j.bbamcr.2024.119767"
    assert record["authors"][:2] == ["Pascucci, Franco Andrés", "Ladelfa, María Fátima"]
    assert record["authors"][-1] == "Monte, Martín"
    assert record["first_author"] == "Pascucci"
    assert record["year"] == 2024
    assert record["journal"] == "Biochimica et biophysica acta. Molecular cell research"
    assert (record["volume"], record["issue"], record["pages"]) == ("1871", "6", "119767")
    assert record["language"] == "eng"
    assert record["abstract"] is None and record["oa_url"] is None
    assert record["notice_of"] == "erratum:pmid:33279609"  # its CommentsCorrections ErratumFor link


@needs_realdata
def test_erratum_without_authors() -> None:
    record = fetch_one(EFETCH_DIR / "38962805.xml")

    assert record["item_type"] == "erratum"
    assert record["title"] == "Correction."
    assert record["authors"] == [] and record["first_author"] is None
    assert (record["issue"], record["pages"]) == ("sup1", "228-229")
    assert record["doi"] == "10.1080/09540121.2024.2374185"
    assert record["notice_of"] == "erratum:pmid:38446048"


@needs_realdata
def test_structured_abstract_keeps_section_labels() -> None:
    record = fetch_one(EFETCH_DIR / "36987902.xml")
    paragraphs = record["abstract"].split("\n\n")

    assert [paragraph.split(":")[0] for paragraph in paragraphs] == [
        "BACKGROUND",
        "MATERIAL AND METHOD",
        "RESULTS",
        "INTERPRETATION",
    ]
    assert paragraphs[0].startswith("BACKGROUND: The number of burn patients over the age of 75")
    # the English title wins over the Norwegian VernacularTitle
    assert record["title"] == (
        "Patients over 75 years admitted to the National Burn Centre, Haukeland University Hospital, 2000-19."
    )
    assert record["authors"][0] == "Bruserud, Øyvind"
    assert record["doi"] == "10.4045/tidsskr.22.0358"


@needs_realdata
def test_unlabelled_abstract_is_plain_text() -> None:
    record = fetch_one(EFETCH_DIR / "24349601.xml")

    assert record["abstract"].startswith("We explore the influence of genetic variation")
    assert "\n" not in record["abstract"]
    assert record["oa_url"] == "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3858957/"
    assert record["authors"][0].startswith("De Neve, ") and record["first_author"] == "De Neve"


@needs_realdata
def test_doi_is_the_articles_own_not_a_cited_references() -> None:
    record = fetch_one(EFETCH_DIR / "35358095.xml")

    assert "10.1161/JAHA.119.014425" in record["raw"]  # first DOI in its ReferenceList
    assert record["doi"] == "10.1172/jci154225"
    assert record["item_type"] == "journal article"


@needs_realdata
def test_collective_author_and_inline_mathml() -> None:
    record = fetch_one(ENTREZ_DIR / "pubmed7.xml")

    assert len(record["authors"]) == 9
    assert record["authors"][0] == "Guo, Fumin"
    assert record["authors"][-1] == "Canadian Respiratory Research Network"
    assert "(1) inhaled He3/Xe129 MRI ventilation and apparent diffusion" in record["abstract"]
    assert record["doi"] == "10.1117/1.jmi.5.2.026002"
    assert record["pages"] == "026002"
    assert record["oa_url"] == "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC6022861/"


@needs_realdata
def test_inline_markup_in_titles_and_abstracts_is_flattened() -> None:
    record = fetch_one(ENTREZ_DIR / "pubmed6.xml")

    assert record["title"] == (
        'A "Blood Relationship" Between the Overlooked Minimum Lactate Equivalent and '
        "Maximal Lactate Steady State in Trained Runners. Back to the Old Days?"
    )
    assert "maximal oxygen uptake ( V.O2max ) 67.6 ± 4.1 ml·kg-1·min-1]" in record["abstract"]


@needs_realdata
def test_unicode_in_titles_and_collective_names() -> None:
    record = fetch_one(EFETCH_DIR / "39382274.xml")

    assert record["title"].startswith(
        "Assessment of the activity and mechanisms of resistance to cefiderocol and combinations of β-lactams"
    )
    assert record["authors"][0] == "Blanco-Martín, Tania"
    assert record["authors"][-1].startswith("GEMARA-SEIMC/CIBERINFEC Study Group on the activity")
    assert record["first_author"] == "Blanco-Martín"


def test_an_empty_result_set_is_no_records() -> None:
    # what efetch answers for a PMID it no longer has: the declaration, the DOCTYPE and an empty set
    empty = (
        b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN" '
        b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n<PubmedArticleSet></PubmedArticleSet>\n'
    )
    assert parse_efetch(empty, where="37909814.xml") == []


@needs_realdata
def test_biopython_efetch_with_two_articles() -> None:
    records = parse_efetch((ENTREZ_DIR / "pubmed2.xml").read_bytes())

    assert [record["pmid"] for record in records] == ["11748933", "11700088"]
    assert records[1]["title"] == "Proton MRI of (13)C distribution by J and chemical shift editing."
    assert records[1]["doi"] == "10.1006/jmre.2001.2429"
    assert (records[1]["year"], records[1]["pages"]) == (2001, "117-23")


# --- conformance: real esearch responses ------------------------------------------------


@needs_realdata
def test_esearch_first_page() -> None:
    result = parse_esearch((ENTREZ_DIR / "esearch1.xml").read_bytes())

    assert isinstance(result, ESearchResult)
    assert (result.count, result.retstart, result.retmax) == (63, 0, 20)
    assert len(result.ids) == 20
    assert (result.ids[0], result.ids[-1]) == ("41282813", "37810457")
    assert (result.webenv, result.query_key, result.warnings) == (None, None, [])


@needs_realdata
def test_esearch_with_history_server() -> None:
    result = parse_esearch((ENTREZ_DIR / "esearch2.xml").read_bytes())

    assert result.count == 42249 and len(result.ids) == 100
    assert (result.webenv, result.query_key) == ("MCID_6927d6e7fee3e90f880ec190", "1")


@needs_realdata
def test_esearch_later_page() -> None:
    result = parse_esearch((ENTREZ_DIR / "esearch3.xml").read_bytes())

    assert (result.count, result.retstart, result.retmax) == (2651, 6, 6)
    assert result.ids == ["11121077", "11121076", "11121075", "11121074", "11121073", "11121072"]


@needs_realdata
def test_esearch_without_hits_reports_the_phrase_not_found() -> None:
    result = parse_esearch((ENTREZ_DIR / "esearch8.xml").read_bytes())

    assert (result.count, result.ids) == (0, [])
    assert result.warnings == ["PhraseNotFound: abcXYZ", "OutputMessage: No items found."]


@needs_realdata
@pytest.mark.parametrize(
    "name",
    ["esearch1.xml", "esearch2.xml", "esearch3.xml", "esearch5.xml", "esearch6.xml", "esearch7.xml", "esearch8.xml"],
)
def test_every_real_esearch_file_parses(name: str) -> None:
    result = parse_esearch((ENTREZ_DIR / name).read_bytes(), where=name)

    assert result.count >= len(result.ids)
    assert all(pmid.isdigit() for pmid in result.ids)


@needs_realdata
def test_esummary_is_not_mistaken_for_esearch() -> None:
    with pytest.raises(SourceFormatError, match="expected <eSearchResult>, got <eSummaryResult>"):
        parse_esearch((ENTREZ_DIR / "esummary1.xml").read_bytes(), where="esearch")


# --- hand-made edge cases in the PubMed DTD's shape -------------------------------------

EDGE_ARTICLE = b"""<?xml version="1.0" ?>
<PubmedArticleSet>
<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">31000001</PMID>
<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Print"><Volume>12</Volume>
<PubDate><MedlineDate>2019 Nov-Dec</MedlineDate></PubDate></JournalIssue>
<ISOAbbreviation>Rev Esp Ejemplo</ISOAbbreviation></Journal>
<ArticleTitle>[Treatment of CO<sub>2</sub> retention in <i>E. coli</i> sepsis].</ArticleTitle>
<Pagination><StartPage>101</StartPage><EndPage>109</EndPage></Pagination>
<ELocationID EIdType="doi" ValidYN="Y">10.1234/EXAMPLE.2019.5</ELocationID>
<Abstract><AbstractText>Plain   abstract
 text.</AbstractText><CopyrightInformation>(c) 2019 Someone</CopyrightInformation></Abstract>
<AuthorList CompleteYN="Y">
<Author ValidYN="N"><LastName>Wrong</LastName><ForeName>Name</ForeName></Author>
<Author ValidYN="Y"><LastName>Garc\xc3\xada-L\xc3\xb3pez</LastName><Initials>MJ</Initials></Author>
<Author ValidYN="Y"><CollectiveName>Spanish Sepsis Group</CollectiveName></Author>
</AuthorList><Language>spa</Language><Language>eng</Language>
<PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType>
<PublicationType UI="D016441">Retracted Publication</PublicationType></PublicationTypeList>
<VernacularTitle>Tratamiento de la retenci\xc3\xb3n de CO2.</VernacularTitle></Article>
<MedlineJournalInfo><MedlineTA>Rev Esp Ejemplo</MedlineTA></MedlineJournalInfo>
</MedlineCitation>
<PubmedData><ArticleIdList><ArticleId IdType="pubmed">31000001</ArticleId></ArticleIdList>
<ReferenceList><Reference><Citation>Other work.</Citation><ArticleIdList>
<ArticleId IdType="doi">10.9999/cited.reference</ArticleId></ArticleIdList></Reference></ReferenceList>
</PubmedData></PubmedArticle>
</PubmedArticleSet>"""

BOOK_CHAPTER = b"""<?xml version="1.0" ?>
<PubmedArticleSet>
<PubmedBookArticle><BookDocument><PMID Version="1">20301295</PMID>
<ArticleIdList><ArticleId IdType="bookaccession">NBK1116</ArticleId>
<ArticleId IdType="doi">10.5555/GeneReviews.a1atd</ArticleId></ArticleIdList>
<Book><Publisher><PublisherName>University of Washington, Seattle</PublisherName></Publisher>
<BookTitle book="gene">GeneReviews<sup>\xc2\xae</sup></BookTitle><PubDate><Year>1993</Year></PubDate>
<AuthorList Type="editors"><Author><LastName>Adam</LastName><ForeName>Margaret P</ForeName></Author>
</AuthorList></Book>
<LocationLabel Type="chapter">Alpha-1 Antitrypsin Deficiency</LocationLabel>
<ArticleTitle book="gene" part="a1atd">Alpha-1 Antitrypsin Deficiency</ArticleTitle>
<Language>eng</Language>
<AuthorList Type="authors"><Author><LastName>Stoller</LastName><ForeName>James K</ForeName>
<Initials>JK</Initials></Author></AuthorList>
<PublicationType UI="D016454">Review</PublicationType>
<Abstract><AbstractText Label="CLINICAL CHARACTERISTICS" NlmCategory="UNASSIGNED">Lung disease.
</AbstractText><AbstractText Label="DIAGNOSIS/TESTING" NlmCategory="UNASSIGNED">Serum test.
</AbstractText></Abstract>
<ContributionDate><Year>2006</Year><Month>10</Month><Day>27</Day></ContributionDate>
</BookDocument><PubmedBookData><ArticleIdList><ArticleId IdType="pubmed">20301295</ArticleId>
</ArticleIdList></PubmedBookData></PubmedBookArticle>
</PubmedArticleSet>"""


def test_edge_cases_of_a_translated_article() -> None:
    (record,) = parse_efetch(EDGE_ARTICLE)

    assert record["title"] == "Treatment of CO2 retention in E. coli sepsis."
    assert record["year"] == 2019
    assert record["journal"] == "Rev Esp Ejemplo"
    assert (record["volume"], record["issue"], record["pages"]) == ("12", None, "101-109")
    assert record["abstract"] == "Plain abstract text."
    assert record["authors"] == ["García-López, MJ", "Spanish Sepsis Group"]
    assert record["first_author"] == "García-López"
    assert record["language"] == "spa"
    assert record["item_type"] == "retracted publication"
    assert record["doi"] == "10.1234/example.2019.5"
    assert record["oa_url"] is None


@needs_realdata
def test_pmcid_is_the_articles_own_not_a_cited_references() -> None:
    record = fetch_one(EFETCH_DIR / "24349601.xml")  # its references name PMCIDs of their own

    assert record["pmcid"] == "PMC3858957"
    assert record["oa_url"] == "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3858957/"


@pytest.mark.parametrize(("written", "expected"), [("PMC6789012", "PMC6789012"), ("6789012", "PMC6789012")])
def test_pmcid_from_the_article_id_list(written: str, expected: str) -> None:
    own = f'<ArticleId IdType="pubmed">31000001</ArticleId><ArticleId IdType="pmc">{written}</ArticleId>'
    body = EDGE_ARTICLE.replace(b'<ArticleId IdType="pubmed">31000001</ArticleId>', own.encode())
    body = body.replace(
        b"10.9999/cited.reference</ArticleId>",
        b'10.9999/cited.reference</ArticleId><ArticleId IdType="pmc">PMC1</ArticleId>',
    )
    (record,) = parse_efetch(body)

    assert record["pmcid"] == expected
    assert record["oa_url"] == f"https://www.ncbi.nlm.nih.gov/pmc/articles/{expected}/"


def test_no_pmcid_without_a_pmc_article_id() -> None:
    body = EDGE_ARTICLE.replace(
        b"10.9999/cited.reference</ArticleId>",
        b'10.9999/cited.reference</ArticleId><ArticleId IdType="pmc">PMC1</ArticleId>',
    )
    (record,) = parse_efetch(body)

    assert record["pmcid"] is None and record["oa_url"] is None


def test_reference_dois_are_never_taken_as_the_articles_own() -> None:
    body = EDGE_ARTICLE.replace(b'<ELocationID EIdType="doi" ValidYN="Y">10.1234/EXAMPLE.2019.5</ELocationID>', b"")
    (record,) = parse_efetch(body)

    assert record["doi"] is None


def test_doi_marked_invalid_is_ignored() -> None:
    (record,) = parse_efetch(EDGE_ARTICLE.replace(b'ValidYN="Y">10.1234', b'ValidYN="N">10.1234'))

    assert record["doi"] is None


def test_not_available_title_falls_back_to_vernacular_title() -> None:
    body = EDGE_ARTICLE.replace(
        b"[Treatment of CO<sub>2</sub> retention in <i>E. coli</i> sepsis].", b"[Not Available]."
    )
    (record,) = parse_efetch(body)

    assert record["title"] == "Tratamiento de la retención de CO2."


def test_book_chapter() -> None:
    (record,) = parse_efetch(BOOK_CHAPTER)

    assert record["pmid"] == "20301295"
    assert record["item_type"] == "book chapter"
    assert record["title"] == "Alpha-1 Antitrypsin Deficiency"
    assert record["journal"] == "GeneReviews®"
    assert record["year"] == 1993
    assert record["authors"] == ["Stoller, James K"] and record["first_author"] == "Stoller"
    assert record["abstract"] == ("CLINICAL CHARACTERISTICS: Lung disease.\n\nDIAGNOSIS/TESTING: Serum test.")
    assert record["doi"] == "10.5555/genereviews.a1atd"
    assert record["raw"].startswith("<PubmedBookArticle>")


def test_whole_book() -> None:
    body = BOOK_CHAPTER.replace(
        b'<ArticleTitle book="gene" part="a1atd">Alpha-1 Antitrypsin Deficiency</ArticleTitle>', b""
    )
    (record,) = parse_efetch(body)

    assert (record["item_type"], record["title"], record["journal"]) == ("book", "GeneReviews®", None)


def test_empty_article_set() -> None:
    assert parse_efetch(b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n</PubmedArticleSet>') == []


# --- malformed bodies -------------------------------------------------------------------


def test_truncated_xml_names_the_request_and_suggests_a_retry() -> None:
    with pytest.raises(SourceFormatError) as caught:
        parse_efetch(EDGE_ARTICLE[:700], where="efetch retstart=200")

    message = str(caught.value)
    assert message.startswith("PubMed response to efetch retstart=200:")
    assert "not valid XML" in message and "retry" in message


def test_html_error_page_points_at_the_base_url() -> None:
    page = b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><hr></body>"
    with pytest.raises(SourceFormatError, match="HTML page instead of XML; check the base URL"):
        parse_efetch(page, where="efetch retstart=0")


def test_well_formed_xhtml_page_is_still_an_error_page() -> None:
    page = b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Not found</p></body></html>'
    with pytest.raises(SourceFormatError, match="HTML page instead of XML"):
        parse_esearch(page)


def test_json_rate_limit_body_is_reported_as_such() -> None:
    body = b'{"error":"API rate limit exceeded","api-key":"10.0.0.1","count":"4","limit":"3"}'
    with pytest.raises(SourceFormatError, match="API rate limit exceeded; slow down"):
        parse_esearch(body)


def test_empty_body() -> None:
    with pytest.raises(SourceFormatError, match="efetch retstart=0: the body is empty"):
        parse_efetch(b"  ", where="efetch retstart=0")


def test_esearch_error_element_raises_with_the_message() -> None:
    body = b"<eSearchResult><ERROR>Invalid query_key</ERROR></eSearchResult>"
    with pytest.raises(SourceFormatError, match="E-utilities reported an error: Invalid query_key"):
        parse_esearch(body)


def test_efetch_error_result_raises_with_the_message() -> None:
    body = b"<eFetchResult><ERROR>Cannot retrieve history data.</ERROR></eFetchResult>"
    with pytest.raises(SourceFormatError, match="Cannot retrieve history data"):
        parse_efetch(body, where="efetch retstart=400")


def test_article_without_pmid_is_rejected() -> None:
    body = EDGE_ARTICLE.replace(b'<PMID Version="1">31000001</PMID>', b"")
    with pytest.raises(SourceFormatError, match="record #1 has no valid <PMID>"):
        parse_efetch(body)
