"""Which links an Unpaywall object offers, and in which order they are tried."""

from __future__ import annotations

from hysem_assets.fulltext.outcome import COLUMNS, Location, PdfOutcome
from hysem_assets.fulltext.unpaywall import locations


def location(pdf: str | None, url: str, host: str = "publisher") -> dict:
    return {
        "url_for_pdf": pdf,
        "url": url,
        "url_for_landing_page": url,
        "host_type": host,
        "version": "publishedVersion",
        "license": "cc-by",
    }


def test_best_first_then_the_others_without_repeats() -> None:
    best = location("https://pub.example/a.pdf", "https://pub.example/a.pdf")
    repository = location(None, "https://repo.example/landing", "repository")
    found = locations({"best_oa_location": best, "oa_locations": [repository, best]})
    assert [link.url for link in found] == ["https://pub.example/a.pdf", "https://repo.example/landing"]
    assert found[1] == Location("https://repo.example/landing", "repository", "publishedVersion", "cc-by")


def test_a_location_offers_its_pdf_before_its_other_url() -> None:
    odd = location("https://pub.example/a.pdf", "https://pub.example/landing")
    assert [link.url for link in locations({"best_oa_location": odd, "oa_locations": [odd]})] == [
        "https://pub.example/a.pdf",
        "https://pub.example/landing",
    ]


def test_closed_access_offers_nothing() -> None:
    assert locations({"best_oa_location": None, "oa_locations": []}) == []
    assert locations({"is_oa": False}) == []


def test_an_outcome_fills_every_column_but_the_record_ones() -> None:
    row = PdfOutcome("timeout", "no complete response within 1 s", Location("https://x.example/a.pdf")).row()
    assert list(row) == [column for column in COLUMNS if column not in ("cluster_id", "doi")]
    assert row["url"] == "https://x.example/a.pdf" and row["path"] is None
    assert PdfOutcome("no_oa_location", "Unpaywall does not know this DOI").row()["url"] is None
