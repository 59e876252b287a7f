"""The one list of sources: every other module iterates over it, and none names a source.

A source of records is one module (its client and parser), one entry here and, when it
searches, one mirror snapshot folder of the same name. Services the pipeline asks about works
it already holds (Crossref, Unpaywall, Zotero) are entries too, so that where each lives and
which environment variable holds its key are said here once.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from hysem_assets.net.http import HttpClient
from hysem_assets.settings.profile import Profile, ProfileError
from hysem_assets.settings.queries import EntryWindow, QueryError, QuerySpec, queries_file
from hysem_assets.settings.redaction import declare_secret_variables
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback
from hysem_assets.sources.europepmc import fetch_europepmc, fetch_jats, probe_europepmc
from hysem_assets.sources.lookups import lookup_crossref, lookup_openalex, probe_crossref, probe_unpaywall
from hysem_assets.sources.openalex import fetch_openalex, probe_openalex
from hysem_assets.sources.pubmed import fetch_pubmed, probe_pubmed
from hysem_assets.sources.scopus import fetch_scopus, probe_scopus

Fetcher = Callable[[HttpClient, Endpoint, QuerySpec, ProgressCallback, EntryWindow | None], Awaitable[FetchOutcome]]
#: Asks the live service one cheap question; returns what it can do, in words.
Probe = Callable[[HttpClient, Endpoint], Awaitable[str]]
#: Fetches the JATS XML full text of a PMCID; raises FetchError (none there) or SourceFormatError (not JATS).
FullText = Callable[[HttpClient, Endpoint, str], Awaitable[bytes]]


class Kind(StrEnum):
    """How a source's records reach a query."""

    #: searched with the query's text (and, for a living review, by the date it added records)
    SEARCH = "search"
    #: read from database exports a reviewer imported (``hysem query import``)
    IMPORTED = "imported"
    #: found by following the citations of the included studies
    CHASED = "chased"
    #: asked about works already held (enrichment, open-access copies, a reference library)
    SERVICE = "service"


@dataclass(frozen=True)
class Source:
    """What the pipeline needs to know about one source."""

    name: str
    label: str
    kind: Kind
    #: What its ``raw_metadata`` asset holds (sources of records only).
    description: str = ""
    #: The public endpoint, used when neither the environment, the profile nor the mirror say otherwise.
    base_url: str = ""
    #: Environment variable holding its API key; never written to config or metadata.
    key_variable: str | None = None
    #: Runs without a key are left out, with this said, instead of failing.
    needs_key: bool = False
    #: Answers only requests that carry a contact address.
    needs_contact: bool = False
    search: Fetcher | None = None
    probe: Probe | None = None
    #: Merge rank: a field's value comes from the lowest rank among equally complete records.
    authority: int = 100
    #: Searched by a query that names no sources.
    default: bool = False
    #: Served by the bundled mirror from a snapshot folder named after the source.
    mirrored: bool = True
    #: The source's own word for its records in the PRISMA flow ("databases" or "other methods").
    prisma: str = "databases"
    #: Serves open-access full texts as JATS XML by PMCID (the ``pdfs`` stage asks it before any PDF).
    full_text: FullText | None = None


_SEARCHED = "normalized core columns plus the raw {raw}"
REGISTRY: tuple[Source, ...] = (
    Source(
        "pubmed", "PubMed", Kind.SEARCH,
        description=f"PubMed records (NCBI E-utilities esearch + efetch XML), {_SEARCHED.format(raw='XML')}.",
        base_url="https://eutils.ncbi.nlm.nih.gov/entrez/eutils", key_variable="NCBI_API_KEY",
        search=fetch_pubmed, probe=probe_pubmed, authority=0, default=True,
    ),
    Source(
        "openalex", "OpenAlex", Kind.SEARCH,
        description=f"OpenAlex works (cursor-paged /works search), {_SEARCHED.format(raw='JSON')}.",
        base_url="https://api.openalex.org", key_variable="OPENALEX_API_KEY",
        search=fetch_openalex, probe=probe_openalex, authority=3, default=True,
    ),
    Source(
        "scopus", "Scopus", Kind.SEARCH,
        description=f"Scopus Search API entries (needs SCOPUS_API_KEY; skipped without one), {_SEARCHED.format(raw='JSON')}.",
        base_url="https://api.elsevier.com", key_variable="SCOPUS_API_KEY", needs_key=True,
        search=fetch_scopus, probe=probe_scopus, authority=1, default=True,
    ),
    Source(
        "europepmc", "Europe PMC", Kind.SEARCH,
        description=f"Europe PMC search results (cursor-paged REST search, core results), {_SEARCHED.format(raw='JSON')}.",
        base_url="https://www.ebi.ac.uk/europepmc/webservices/rest",
        search=fetch_europepmc, probe=probe_europepmc, authority=2, full_text=fetch_jats,
    ),
    Source(
        "imported", "Imported exports", Kind.IMPORTED, mirrored=False, authority=4,
        description="Records of database exports imported into the query (RIS, NBIB/MEDLINE, Web of Science, CSV), "
        "each row under the source name it was imported as, with the file's provenance.",
    ),
    Source(
        "citations", "Citation searching", Kind.CHASED, mirrored=False, authority=5, prisma="other methods",
        description="Works the included studies cite (backward) and works citing them (forward), one level, from "
        "OpenAlex; each row says how it was found.",
    ),
    Source("crossref", "Crossref", Kind.SERVICE, base_url="https://api.crossref.org", probe=probe_crossref),
    Source("unpaywall", "Unpaywall", Kind.SERVICE, base_url="https://api.unpaywall.org", probe=probe_unpaywall,
           needs_contact=True),
    Source("zotero", "Zotero", Kind.SERVICE, base_url="https://api.zotero.org", key_variable="ZOTERO_API_KEY",
           mirrored=False),
)  # fmt: skip
BY_NAME = {source.name: source for source in REGISTRY}
declare_secret_variables(filter(None, (source.key_variable for source in REGISTRY)))
#: Enrichment lookups by DOI, in the order their values are applied.
LOOKUPS = {"crossref": lookup_crossref, "openalex": lookup_openalex}
#: Where the citations of included studies are followed.
CITATIONS_FROM = "openalex"


def of_kind(*kinds: Kind) -> tuple[Source, ...]:
    return tuple(entry for entry in REGISTRY if entry.kind in kinds)


def record_sources() -> tuple[str, ...]:
    """Every source with a ``raw_metadata`` asset, in merge-authority order."""
    entries = of_kind(Kind.SEARCH, Kind.IMPORTED, Kind.CHASED)
    return tuple(entry.name for entry in sorted(entries, key=lambda entry: entry.authority))


def searched() -> tuple[str, ...]:
    """Sources a query's text searches."""
    return tuple(entry.name for entry in of_kind(Kind.SEARCH))


def default_searched() -> tuple[str, ...]:
    return tuple(entry.name for entry in of_kind(Kind.SEARCH) if entry.default)


def mirrored() -> tuple[str, ...]:
    """Sources the bundled mirror answers for when their URL is not set."""
    return tuple(entry.name for entry in REGISTRY if entry.mirrored)


def full_text_sources() -> tuple[str, ...]:
    """Sources that serve JATS XML full texts by PMCID, in registry order."""
    return tuple(entry.name for entry in REGISTRY if entry.full_text is not None)


def query_sources(spec: QuerySpec) -> list[str]:
    """The sources ``spec`` searches: its own list, or the default ones; an unknown name is an error naming it."""
    names = list(default_searched() if spec.sources is None else spec.sources)
    unknown = [name for name in names if name not in searched()]
    if unknown:
        raise QueryError(
            f"query {spec.slug!r} ({queries_file()}): unknown sources {unknown}; choose from {list(searched())}"
        )
    return names


def label(name: str) -> str:
    """A source's name in words; a name that is no entry (an imported export's) is shown as given."""
    return BY_NAME[name].label if name in BY_NAME else name


def other_methods(names: Iterable[str]) -> set[str]:
    """The names whose records PRISMA counts as identified via other methods."""
    return {name for name in names if name in BY_NAME and BY_NAME[name].prisma == "other methods"}


def production_url(name: str) -> str:
    return BY_NAME[name].base_url


def api_key(name: str) -> str | None:
    """The source's key from the environment, or None when it has none or the variable is unset."""
    variable = BY_NAME[name].key_variable if name in BY_NAME else None
    return (os.environ.get(variable) or None) if variable else None


def check_profile(profile: Profile) -> None:
    """Refuse a profile that configures a source the registry does not hold, naming the profile and key."""
    unknown = [name for name in profile.sources if name not in BY_NAME]
    if unknown:
        raise ProfileError(
            f"profile {profile.name!r}: sources.{unknown[0]} is not a source; choose from {', '.join(BY_NAME)}"
        )
