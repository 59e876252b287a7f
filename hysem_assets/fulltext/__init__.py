"""Open-access full text: find each record's PDF through Unpaywall and keep only valid copies."""

from hysem_assets.fulltext.download import PdfDownloader, PdfLimits
from hysem_assets.fulltext.outcome import COLUMNS, STATUSES, DownloadFailed, Location, PdfOutcome, PdfStatus
from hysem_assets.fulltext.pdfcheck import structural_problem
from hysem_assets.fulltext.pdfs import download_pdfs, fetch_pdfs
from hysem_assets.fulltext.store import doi_digest, pdf_path
from hysem_assets.fulltext.unpaywall import locations

__all__ = [
    "COLUMNS",
    "STATUSES",
    "DownloadFailed",
    "Location",
    "PdfDownloader",
    "PdfLimits",
    "PdfOutcome",
    "PdfStatus",
    "doi_digest",
    "download_pdfs",
    "fetch_pdfs",
    "locations",
    "pdf_path",
    "structural_problem",
]
