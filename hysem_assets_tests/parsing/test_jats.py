"""JATS XML full texts into ``parsed_docs`` rows: real PubMed Central articles, spans, bad and hostile input."""

import html
import json
import re

import pytest
from lxml import etree

from hysem_assets.embedding.minilm import TOKENIZER_NAME
from hysem_assets.extraction.sections import EXCLUDED, excluded_parts
from hysem_assets.parsing.jats import NOT_JATS, NOT_XML, jats_document, parse_jats
from hysem_assets.retrieval.chunking import blank_reference_lists, markdown_sections
from hysem_assets_tests.paths import REALDATA, needs_realdata

JATS_DIR = REALDATA / "europepmc" / "jats"
ARTICLES = sorted(JATS_DIR.glob("PMC*.nxml")) if JATS_DIR.is_dir() else []
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _article(body: str, back: str = "", front: str = "") -> bytes:
    return (
        '<?xml version="1.0"?><article xmlns:mml="http://www.w3.org/1998/Math/MathML"><front><article-meta>'
        "<title-group><article-title>A <italic>trial</italic> of X</article-title></title-group>"
        f"{front}</article-meta></front><body>{body}</body><back>{back}</back></article>"
    ).encode()


def _headings(markdown: str, level: int) -> list[str]:
    """The headings of one level, Markdown escapes undone."""
    prefix = "#" * level + " "
    return [
        html.unescape(line[len(prefix) :].replace("\\_", "_"))
        for line in markdown.splitlines()
        if line.startswith(prefix)
    ]


def _flat(element: etree._Element) -> str:
    return " ".join("".join(element.itertext()).split())


@needs_realdata
def test_fifty_real_articles() -> None:
    assert len(ARTICLES) == 50
    for path in ARTICLES:
        xml = path.read_bytes()
        doc = parse_jats(xml, str(path))
        assert doc.status == "jats", (path.name, doc.error)
        assert doc.error is None and doc.pages == 0 and doc.parser.startswith("jats (lxml ")
        assert doc.tokenizer == TOKENIZER_NAME and doc.token_count > 1000, path.name
        root = etree.fromstring(xml, _SAFE)
        # the title as "#", once
        assert _headings(doc.markdown, 1) == [_flat(root.find("front/article-meta/title-group/article-title"))]
        # every top-level <sec> of <body> is one "##" heading, in order, right after the abstract(s)
        top = root.findall("body/sec")
        abstracts = len(root.findall("front/article-meta/abstract"))
        level2 = _headings(doc.markdown, 2)
        assert "Abstract" in level2[:abstracts], path.name
        body = level2[abstracts : abstracts + len(top)]
        assert len(body) == len(top), path.name
        for heading, sec in zip(body, top, strict=True):
            title = _flat(sec.find("title")) if sec.find("title") is not None else ""
            if title:
                assert heading.endswith(title), path.name
        assert not set(level2[abstracts + len(top) :]) & {
            _flat(s.find("title")) for s in top if s.find("title") is not None
        }
        assert level2[-1] == "References"
        # every <table-wrap> with a <table> is one entry of tables_json, with its number of <tr> rows
        tables = json.loads(doc.tables_json)
        wraps = [wrap for wrap in root.iter("table-wrap") if wrap.find(".//table") is not None]
        assert len(tables) == len(wraps), path.name
        for table, wrap in zip(tables, wraps, strict=True):
            assert table["num_rows"] == len(wrap.findall(".//tr")), path.name
            assert len(table["grid"]) == table["num_rows"] and {len(row) for row in table["grid"]} == {
                table["num_cols"]
            }
            assert set(table) == {"page", "bbox", "num_rows", "num_cols", "grid", "caption"}
        # one reference a line
        refs = doc.markdown.split("## References", 1)[1].strip().splitlines()
        assert len(refs) == len(root.findall("back/ref-list/ref")), path.name


def test_sections_abstract_lists_formulas_and_back_matter() -> None:
    abstract = (
        "<abstract><sec><title>Background</title><p>Why <sup>2</sup>.</p></sec>"
        "<sec><title>Results</title><p>Fewer events (<italic>p</italic> &lt; 0.05).</p></sec></abstract>"
        "<author-notes><fn fn-type='conflict'><p>None declared.</p></fn></author-notes>"
        "<funding-group><funding-statement>Funded by the Trust.</funding-statement></funding-group>"
    )
    body = (
        "<sec><label>1</label><title>Methods</title><p>We randomised<xref ref-type='bibr' rid='B1'>[1]</xref> "
        "patients, dose <inline-formula><mml:math><mml:mi>x</mml:mi><mml:mo>=</mml:mo><mml:mn>2</mml:mn></mml:math>"
        "</inline-formula> mg.<disp-formula id='e1'><label>(1)</label><tex-math>a = b^2</tex-math></disp-formula>"
        "Then H<sub>2</sub>O was given.</p>"
        "<list list-type='bullet'><list-item><p>first</p></list-item><list-item><p>second</p></list-item></list>"
        "<sec><title>Outcomes</title><p>Pain.</p>"
        "<fig id='f1'><label>Figure 1</label><caption><title>Flow.</title><p>All patients.</p></caption></fig>"
        "</sec></sec>"
        "<sec sec-type='supplementary-material'><title>Supplementary Material</title>"
        "<supplementary-material><label>Additional file 1</label><caption><title>CONSORT checklist</title>"
        "<p>A long description that is left out.</p></caption><media xlink:href='x.doc' "
        "xmlns:xlink='http://www.w3.org/1999/xlink'/></supplementary-material></sec>"
    )
    back = (
        "<ack><p>We thank the nurses.</p></ack>"
        "<app-group><app><title>Appendix A</title><sec><title>Questionnaire</title><p>Items.</p></sec></app>"
        "</app-group>"
        "<ref-list><ref id='B1'><label>1</label><element-citation><person-group><name><surname>Smith</surname>"
        "<given-names>J</given-names></name><name><surname>Doe</surname><given-names>A</given-names></name>"
        "</person-group><article-title>A trial</article-title><source>Lancet</source><year>2001</year>"
        "<volume>3</volume><fpage>1</fpage><lpage>9</lpage></element-citation></ref>"
        "<ref id='B2'><label>2</label><mixed-citation>Roe R. Another. <source>BMJ</source> 2002.</mixed-citation>"
        "</ref></ref-list>"
    )
    doc = parse_jats(_article(body, back, abstract), "a.nxml")
    assert doc.status == "jats", doc.error
    md = doc.markdown
    assert md.startswith("# A trial of X\n\n## Abstract\n\nBackground: Why 2.\n\nResults: Fewer events (p &lt; 0.05).")
    assert _headings(md, 2) == [
        "Abstract",
        "1 Methods",
        "Supplementary Material",
        "Acknowledgements",
        "Appendix A",
        "Funding",
        "Competing interests",
        "References",
    ]
    assert _headings(md, 3) == ["Outcomes", "Questionnaire"]
    assert "We randomised[1] patients, dose x=2 mg.\n\n$$a = b^2 (1)$$\n\nThen H2O was given." in md
    assert "- first\n- second" in md
    assert "Figure 1. Flow. All patients." in md
    assert "Additional file 1: CONSORT checklist" in md and "left out" not in md
    assert md.endswith(
        "## References\n\n- 1. Smith J, Doe A. A trial. Lancet 2001;3:1-9.\n- 2. Roe R. Another. BMJ 2002."
    )
    assert json.loads(doc.equations_json) == [
        {"page": None, "bbox": None, "text": "a = b^2", "orig": "a = b^2", "number": "1"}
    ]
    # extraction and retrieval find the parts by heading, as in a PDF's Markdown
    paths = [section.path for section in markdown_sections(md)]
    assert "A trial of X > 1 Methods > Outcomes" in paths
    dropped = " ".join(md[start:end] for start, end in excluded_parts(md))
    assert "nurses" in dropped and "Funded" in dropped and "None declared" in dropped and "Smith" in dropped
    assert "Smith" not in blank_reference_lists(md)
    assert EXCLUDED == 0.0


def test_rowspan_colspan_grid_as_the_pdf_route_writes_it() -> None:
    table = (
        "<table-wrap id='t1'><label>Table 1</label><caption><title>Baseline</title></caption><table>"
        "<thead><tr><th rowspan='2'>Group</th><th colspan='2'>Outcome</th></tr>"
        "<tr><th>n</th><th>%</th></tr></thead>"
        "<tbody><tr><td rowspan='2'>A</td><td>1</td><td>10</td></tr><tr><td>2</td><td>20</td></tr>"
        "<tr><td colspan='3'>Total <bold>3</bold></td></tr></tbody></table>"
        "<table-wrap-foot><fn><p>n, number.</p></fn></table-wrap-foot></table-wrap>"
    )
    xml = _article(f"<sec><title>Results</title><p>See table.{table}</p></sec>")
    doc = parse_jats(xml, "t.nxml")
    tables = json.loads(doc.tables_json)
    assert tables == [
        {
            "page": None,
            "bbox": None,
            "num_rows": 5,
            "num_cols": 3,
            "grid": [
                ["Group", "Outcome", "Outcome"],
                ["Group", "n", "%"],
                ["A", "1", "10"],
                ["A", "2", "20"],
                ["Total 3", "Total 3", "Total 3"],
            ],
            "caption": "Table 1. Baseline",
        }
    ]
    assert "See table.\n\nTable 1. Baseline\n\n| Group " in doc.markdown
    assert re.search(r"^\| A +\| 2 +\| 20 +\|$", doc.markdown, re.M)
    assert "n, number." in doc.markdown
    # the PDF route's exporter writes the same JSON from the same document
    from hysem_assets.parsing.export import tables_json

    document, _, _ = jats_document(xml)
    assert json.loads(tables_json(document)) == tables


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        (b"<article><body><p>unclosed</body></article>", NOT_XML),
        (b"", NOT_XML),
        (b"%PDF-1.7 binary", NOT_XML),
        (b"<html><body><p>A web page</p></body></html>", NOT_JATS),
        (b"<pmc-articleset><article/></pmc-articleset>", NOT_JATS),
        (b"<article><front><article-meta/></front></article>", "no abstract or body text"),
    ],
)
def test_not_jats_is_a_failed_row(xml: bytes, message: str) -> None:
    doc = parse_jats(xml, "bad.xml")
    assert doc.status == "failed" and doc.markdown == "" and doc.tables_json == "[]"
    assert doc.error and message in doc.error and "JATS" in doc.error


@pytest.mark.parametrize("remote", [False, True])
def test_external_entities_are_not_resolved(tmp_path, remote: bool) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    dtd = f'<!ENTITY xxe SYSTEM "file://{secret}">'
    if remote:
        dtd += '<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;'
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE article [{dtd}]>'
        "<article><body><sec><title>Methods</title><p>Read &xxe; here now.</p></sec></body></article>"
    ).encode()
    if not remote:  # the input is hostile: a parser that resolves entities reads the file
        unsafe = etree.XMLParser(resolve_entities=True, recover=True)
        assert "TOPSECRET" in "".join(etree.fromstring(xml, unsafe).itertext())
    doc = parse_jats(xml, "xxe.xml")
    assert doc.status == "jats", doc.error
    assert doc.markdown == "## Methods\n\nRead here now."


def test_html_entities_of_the_jats_dtd_are_characters() -> None:
    """PMC files name the JATS DTD, which is never loaded: its character entities still read as characters."""
    xml = (
        b'<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.2//EN" '
        b'"JATS-archivearticle1.dtd"><article><body><sec><title>Results</title>'
        b"<p>Mean&nbsp;&plusmn;&nbsp;SD, &alpha; &lt; 0.05, &unknown; done.</p></sec></body></article>"
    )
    doc = parse_jats(xml, "dtd.nxml")
    assert doc.status == "jats", doc.error
    assert doc.markdown == "## Results\n\nMean ± SD, α &lt; 0.05, done."


def test_boxes_nested_lists_and_footnotes() -> None:
    body = (
        "<p>Lead.</p><sec><title>Results</title>"
        "<list list-type='order'><list-item><p>one<list><list-item><p>inner</p></list-item></list></p></list-item>"
        "<list-item><p>two</p></list-item></list>"
        "<boxed-text><caption><title>Box 1</title></caption><sec><title>Key messages</title><p>Short.</p></sec>"
        "</boxed-text><p>Text<fn id='n1'><label>a</label><p>An inline note.</p></fn> goes on.</p></sec>"
    )
    back = "<fn-group><fn><label>b</label><p>A back note.</p></fn></fn-group>"
    md = parse_jats(_article(body, back), "b.nxml").markdown
    assert "Lead.\n\n## Results\n\n1. one\n    - inner\n2. two\n\nBox 1\n\n### Key messages\n\nShort." in md
    assert md.count("Box 1") == 1 and md.count("inner") == 1
    assert "Text goes on." in md
    assert md.endswith("## Footnotes\n\nb A back note.\n\na An inline note.")
    assert parse_jats(_article(body), "c.nxml").markdown.endswith("## Footnotes\n\na An inline note.")
