"""Each source's record becomes the same searchable fields."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hysem_assets.mirror.search import compile_query
from hysem_assets.mirror.texts import inverted_abstract, mesh_forms, openalex_document, pubmed_document, scopus_document

PUBMED = """<PubmedArticle><MedlineCitation><PMID>1</PMID><Article>
<ArticleTitle>PM<sub>2.5</sub> and statin use.</ArticleTitle>
<Abstract><AbstractText Label="RESULTS">HR 0.81 (95% CI 0.70-0.94) compared with non-users.</AbstractText></Abstract>
<AuthorList><Author><LastName>Gómez-Herrera</LastName><ForeName>María José</ForeName><Initials>MJ</Initials></Author>
<Author><CollectiveName>STATIN-COG Trial Investigators</CollectiveName></Author></AuthorList>
<Journal><Title>Journal of neuropharmacoepidemiology</Title></Journal>
<PublicationTypeList><PublicationType>Randomized Controlled Trial</PublicationType></PublicationTypeList>
</Article><MeshHeadingList><MeshHeading><DescriptorName>Dementia, Vascular</DescriptorName></MeshHeading></MeshHeadingList>
<KeywordList><Keyword>memory clinics</Keyword></KeywordList></MedlineCitation></PubmedArticle>"""


def test_pubmed_record_keeps_inline_markup_text_names_mesh_and_types() -> None:
    document = pubmed_document(ET.fromstring(PUBMED))
    for query in (
        '"pm2.5"[ti]',
        "non-users[ab]",
        "Gomez-Herrera MJ[au]",
        "statin-cog[cn]",
        "vascular dementia[mh]",
        "memory clinics[ot]",
        "randomized controlled trial[pt]",
        "neuropharmacoepidemiology[ta]",
    ):
        assert compile_query(query, "pubmed").matches(document), query


def test_openalex_abstract_is_rebuilt_from_the_inverted_index() -> None:
    assert inverted_abstract({"statins": [1], "Taking": [0], "daily": [2]}) == "Taking statins daily"
    assert inverted_abstract(None) == ""
    work = {
        "title": "A cohort",
        "abstract_inverted_index": {"statin": [0], "users": [1]},
        "keywords": [{"display_name": "dementia"}],
        "mesh": [{"descriptor_name": "Cholesterol, LDL", "qualifier_name": None}],
        "authorships": [{"author": {"display_name": "Ingrid Ødegaard"}, "raw_author_name": "I. Odegaard"}],
        "primary_location": {"source": {"display_name": "Brain and Cognitive Medicine"}},
        "type": "article",
    }
    document = openalex_document(work)
    assert compile_query('"statin users" dementia', "openalex").matches(document)
    assert compile_query('"ldl cholesterol"', "openalex").matches(document)
    assert compile_query("AUTH(odegaard)", "scopus").matches(document)


def test_scopus_entry_splits_keywords_and_reads_dotted_initials() -> None:
    entry = {
        "dc:title": "Statin use",
        "dc:description": "Background: Among 6,950 participants. © 2019 Association for Ageing Research",
        "authkeywords": "statins | dementia | cohort",
        "author": [{"surname": "Navarro-Sánchez", "given-name": "Isabel", "initials": "I."}],
        "prism:publicationName": "Revista de Neurología Geriátrica",
        "subtypeDescription": "Conference Paper",
    }
    document = scopus_document(entry)
    assert compile_query("KEY(dementia) AND ABS(participants)", "scopus").matches(document)
    assert not compile_query('KEY("dementia cohort")', "scopus").matches(document)
    assert compile_query("AUTHOR-NAME(navarro-sanchez i)", "scopus").matches(document)
    assert compile_query("SRCTITLE(neurologia)", "scopus").matches(document)


def test_mesh_headings_also_read_in_natural_order() -> None:
    assert mesh_forms("Dementia, Vascular") == ["Dementia, Vascular", "Vascular Dementia"]
    assert mesh_forms("Humans") == ["Humans"]
