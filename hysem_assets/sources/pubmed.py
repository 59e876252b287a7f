"""PubMed through NCBI E-utilities: esearch on the history server, efetch in batches."""

from __future__ import annotations

from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, fetch_pages, no_progress
from hysem_assets.sources.errors import SourceFormatError, UnexpectedReply, reply_json
from hysem_assets.sources.pubmed_xml import parse_efetch, parse_esearch

#: E-utilities serves at most 10,000 records of one search through esearch/efetch paging.
MAX_RECORDS = 10_000
#: NCBI asks for efetch batches of at most 200 ids on GET.
EFETCH_BATCH = 200


def common_params(endpoint: Endpoint) -> dict[str, str]:
    """What every E-utilities request carries: the database, the tool, the contact address and the key."""
    params = {"db": "pubmed", "tool": "hysem"}
    if endpoint.mailto:
        params["email"] = endpoint.mailto
    if endpoint.api_key:
        params["api_key"] = endpoint.api_key
    return params


def search_params(spec: QuerySpec, endpoint: Endpoint, window: EntryWindow | None = None) -> dict[str, str]:
    """The term, with publication dates as ``mindate``/``maxdate``; a re-search limits the Entrez date
    (when PubMed added the record) instead, and the publication dates move into the term."""
    retmax = min(spec.max_records, MAX_RECORDS)
    term = spec.text_for("pubmed")
    first = spec.date_from.strftime("%Y/%m/%d") if spec.date_from else "1800/01/01"
    last = spec.date_to.strftime("%Y/%m/%d") if spec.date_to else "3000/12/31"
    if window is not None and (spec.date_from or spec.date_to):
        term = f'({term}) AND ("{first}"[dp] : "{last}"[dp])'
    params = {**common_params(endpoint), "term": term, "usehistory": "y", "retmax": str(retmax)}
    if window is not None:
        params.update(
            datetype="edat", mindate=window.since.strftime("%Y/%m/%d"), maxdate=window.until.strftime("%Y/%m/%d")
        )
    elif spec.date_from or spec.date_to:
        params.update(datetype="pdat", mindate=first, maxdate=last)
    return params


async def fetch_pubmed(
    client: HttpClient,
    endpoint: Endpoint,
    spec: QuerySpec,
    progress: ProgressCallback = no_progress,
    window: EntryWindow | None = None,
) -> FetchOutcome:
    """All records matching the query (added within ``window`` when given), up to ``max_records``
    (and E-utilities' 10,000)."""
    outcome = FetchOutcome(source="pubmed", stats=client.stats)
    try:
        _, body = await client.request(f"{endpoint.base_url}/esearch.fcgi", data=search_params(spec, endpoint, window))
        search = parse_esearch(body, where="esearch")
    except (FetchError, SourceFormatError) as exc:
        outcome.fail("esearch", exc)
        return outcome
    outcome.total_available = search.count
    outcome.notes.extend(search.warnings)
    wanted = min(search.count, spec.max_records, MAX_RECORDS)
    if not (search.webenv and search.query_key):
        wanted = min(wanted, len(search.ids))
    batch = min(EFETCH_BATCH, endpoint.page_size)

    batches: dict[int, list] = {}

    async def fetch_batch(retstart: int) -> Exception | None:
        size = min(batch, wanted - retstart)
        if search.webenv and search.query_key:
            selection = {
                "WebEnv": search.webenv,
                "query_key": search.query_key,
                "retstart": str(retstart),
                "retmax": str(size),
            }
        else:  # a server without history support: fetch by the ids esearch listed
            selection = {"id": ",".join(search.ids[retstart : retstart + size])}
        try:
            _, body = await client.request(
                f"{endpoint.base_url}/efetch.fcgi", data={**common_params(endpoint), "retmode": "xml", **selection}
            )
            batches[retstart] = parse_efetch(body, where=_batch_where(retstart))
        except (FetchError, SourceFormatError) as exc:
            return exc
        finally:
            progress(sum(map(len, batches.values())), wanted)
        return None

    failed = await fetch_pages(range(0, wanted, batch), fetch_batch)
    for retstart, error in sorted(failed.items()):
        outcome.fail(_batch_where(retstart), error)
    outcome.records = [record for start in sorted(batches) for record in batches[start]]
    return outcome


def _batch_where(retstart: int) -> str:
    return f"efetch retstart={retstart}"


async def probe_pubmed(client: HttpClient, endpoint: Endpoint) -> str:
    """One esearch without results: does the service search, and with the key?"""
    params = {**common_params(endpoint), "term": "review", "retmax": 0, "retmode": "json"}
    _, body = await client.request(f"{endpoint.base_url}/esearch.fcgi", params=params)
    count = reply_json(body).get("esearchresult", {}).get("count")
    if count is None:
        raise UnexpectedReply("answered without an esearch result")
    return f"searches ({int(count):,} records for 'review')" + (", with the API key" if endpoint.api_key else "")
