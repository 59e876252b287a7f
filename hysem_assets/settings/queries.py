"""Search queries as declared in ``config/queries.yaml``; each one is a partition."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hysem_assets.settings.environment import EMAIL, config_dir
from hysem_assets.settings.yamlfile import ConfigFileError, read_yaml_mapping

MAX_SLUG_LENGTH = 80
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: Shaped like an address the APIs' polite pools accept: one '@', a dotted domain, no spaces.
#: The bibliographic databases index nothing older (PubMed's own lower bound).
EARLIEST_DATE = dt.date(1800, 1, 1)
#: Schedule words a query may use instead of a cron string (Monday and the 1st, 06:00 UTC).
SCHEDULE_CRONS = {"daily": "0 6 * * *", "weekly": "0 6 * * 1", "monthly": "0 6 1 * *"}


class QueryError(ValueError):
    """The queries file or one declared query is invalid."""


class CitationSearch(BaseModel):
    """Following the included studies' citations one level: what they cite, what cites them."""

    model_config = ConfigDict(extra="forbid")

    backward: bool = True
    forward: bool = True
    #: At most this many works taken per study and direction; what the cap leaves out is said.
    per_study: int = Field(200, ge=1, le=10_000)


class QuerySpec(BaseModel):
    """One declared literature search; ``slug`` is its partition key."""

    model_config = ConfigDict(extra="forbid")

    slug: str
    title: str = ""
    #: One query string for every source, or a mapping source -> source-specific syntax.
    query: str | dict[str, str]
    #: Sources searched (names of the source registry); none: the registry's default ones.
    sources: list[str] | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    max_records: int = Field(10_000, ge=1)
    mailto: str | None = None
    #: The review protocol (config/protocols/<name>.yaml) whose fields are extracted; none: ``generic``.
    protocol: str | None = Field(None, pattern=r"^[a-z][a-z0-9_-]*$")
    #: A living review: ``daily``, ``weekly``, ``monthly`` or a cron string; each tick searches for what is new.
    schedule: str | None = None
    #: Citation searching from the included studies; none: off.
    citations: CitationSearch | None = None

    @field_validator("slug")
    @classmethod
    def _check_slug(cls, value: str) -> str:
        if len(value) > MAX_SLUG_LENGTH:
            raise ValueError(
                f"slug is {len(value)} characters long; at most {MAX_SLUG_LENGTH} (it becomes a partition key)"
            )
        if not _SLUG.match(value):
            raise ValueError(
                f"slug {value!r} must be lower-case letters, digits, '-' or '_' "
                "(it becomes a partition key); try hysem_assets.settings.queries.slugify()"
            )
        return value

    @field_validator("sources")
    @classmethod
    def _check_sources(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("no sources; name at least one, or leave `sources` out for the default ones")
        odd = [source for source in value if not _SLUG.match(source)]
        if odd:
            raise ValueError(f"source names {odd} must be lower-case letters, digits, '-' or '_'")
        repeated = sorted({source for source in value if value.count(source) > 1})
        if repeated:
            raise ValueError(f"sources {repeated} are listed more than once")
        return value

    @field_validator("mailto")
    @classmethod
    def _check_mailto(cls, value: str | None) -> str | None:
        if value is not None and not EMAIL.match(value):
            raise ValueError(f"mailto {value!r} is not an e-mail address (like name@example.org)")
        return value

    @field_validator("schedule")
    @classmethod
    def _check_schedule(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from dagster._utils.schedules import is_valid_cron_string  # the pinned Dagster's own check

        value = " ".join(value.split())
        if value.lower() in SCHEDULE_CRONS:
            return value.lower()
        if not is_valid_cron_string(value):
            raise ValueError(
                f"schedule {value!r} is neither {', '.join(SCHEDULE_CRONS)} nor a cron string "
                "(five fields, like '0 6 * * 1' for Mondays at 06:00 UTC)"
            )
        return value

    @property
    def cron(self) -> str | None:
        """The schedule as a cron string, or None for a one-off review."""
        return SCHEDULE_CRONS.get(self.schedule, self.schedule) if self.schedule else None

    @model_validator(mode="after")
    def _check_dates(self) -> QuerySpec:
        for name in ("date_from", "date_to"):
            value = getattr(self, name)
            if value is not None and value < EARLIEST_DATE:
                raise ValueError(f"{name} {value} is before {EARLIEST_DATE}; the sources index nothing older")
        if self.date_from and self.date_from > dt.date.today():
            raise ValueError(f"date_from {self.date_from} is in the future; nothing has been published since")
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError(f"date_from {self.date_from} is after date_to {self.date_to}")
        return self

    @model_validator(mode="after")
    def _check_query(self) -> QuerySpec:
        if isinstance(self.query, dict):
            if self.sources is None:  # a text per source names the sources
                self.sources = list(self.query)
            missing = [s for s in self.sources if not self.query.get(s)]
            if missing:
                raise ValueError(f"no query text for sources {missing}")
        elif not self.query.strip():
            raise ValueError("query text is empty")
        return self

    def text_for(self, source: str) -> str:
        return self.query[source] if isinstance(self.query, dict) else self.query

    def texts(self) -> list[str]:
        """Every text the query searches with, once each."""
        return list(dict.fromkeys(self.query.values())) if isinstance(self.query, dict) else [self.query]

    def search_key(self, source: str) -> str:
        """What decides one source's results; a re-search may only add to records found under the same key."""
        return json.dumps(
            [self.text_for(source), str(self.date_from), str(self.date_to), self.max_records], ensure_ascii=False
        )


@dataclass(frozen=True)
class EntryWindow:
    """Records a source added between two days, both included: what a re-search of a living review asks for."""

    since: dt.date
    until: dt.date

    def __str__(self) -> str:
        return f"added {self.since.isoformat()} to {self.until.isoformat()}"


def slugify(text: str) -> str:
    """A partition-key-safe slug from free text: ``"Ozone & Heart"`` -> ``"ozone-heart"``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:MAX_SLUG_LENGTH].rstrip("-") or "query"


def new_query_spec(
    text: str | None,
    *,
    slug: str | None = None,
    title: str = "",
    per_source: Mapping[str, str | None] | None = None,
    sources: Sequence[str] | None = None,
    date_from: dt.date | str | None = None,
    date_to: dt.date | str | None = None,
    max_records: int = 10_000,
    mailto: str | None = None,
    protocol: str | None = None,
    schedule: str | None = None,
) -> QuerySpec:
    """A query from what a person types (``hysem query add`` or the UI's launchpad).

    ``text`` serves every source unless ``per_source`` gives a source its own syntax;
    the slug derives from the title or the text when it is not given.
    """
    own = {source: value for source, value in (per_source or {}).items() if value}
    if own:
        query: str | dict[str, str] = {
            source: own.get(source) or text or "" for source in (own if sources is None else sources)
        }
    elif text and text.strip():
        query = text
    else:
        raise QueryError("Give the query text, or a text per source.")
    slug = slug or slugify(title or text or next(iter(own.values())))
    from hysem_assets.settings.protocols import ProtocolError, load_protocol

    try:
        load_protocol(protocol)
    except ProtocolError as exc:
        raise QueryError(f"Query {slug!r}: {exc}") from exc
    try:
        return QuerySpec(
            slug=slug,
            title=title,
            query=query,
            sources=None if sources is None else list(sources),
            date_from=date_from or None,
            date_to=date_to or None,
            max_records=max_records,
            mailto=mailto or None,
            protocol=protocol or None,
            schedule=schedule or None,
        )
    except ValidationError as exc:
        raise QueryError(f"Query {slug!r} is invalid: {_problems(exc)}") from exc


def _problems(error: ValidationError) -> str:
    """A validation error on one line: ``field: problem; field: problem``."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'query'}: {e['msg'].removeprefix('Value error, ')}" for e in error.errors()
    )


def queries_file() -> Path:
    return config_dir() / "queries.yaml"


def load_queries(path: Path | None = None) -> dict[str, QuerySpec]:
    """All declared queries by slug; errors name the file, the line, the entry and the problem."""
    path = path or queries_file()
    if not path.is_file():
        return {}
    try:
        document = read_yaml_mapping(path, expected="a mapping with a `queries:` list")
    except ConfigFileError as exc:
        raise QueryError(str(exc)) from None
    entries = document.data.get("queries") or []
    if not isinstance(entries, list):
        raise QueryError(f"{document.where('queries')}: `queries` must be a list of queries")
    specs: dict[str, QuerySpec] = {}
    for index, entry in enumerate(entries):
        where = document.where("queries", index)
        if not isinstance(entry, dict):
            raise QueryError(f"{where}: query #{index + 1} must be a mapping (slug, query, sources, ...)")
        label = entry.get("slug", f"#{index + 1}")
        try:
            spec = QuerySpec.model_validate(entry)
        except ValidationError as exc:
            raise QueryError(f"{where}: query {label!r} is invalid: {_problems(exc)}") from None
        if spec.slug in specs:
            raise QueryError(f"{where}: slug {spec.slug!r} is declared twice; slugs must be unique")
        specs[spec.slug] = spec
    return specs


def get_query(slug: str, path: Path | None = None) -> QuerySpec:
    specs = load_queries(path)
    if slug not in specs:
        raise QueryError(
            f"No query with slug {slug!r} in {path or queries_file()}; "
            f"declared: {sorted(specs)}. Add it with `hysem query add`."
        )
    return specs[slug]


def append_query(spec: QuerySpec, path: Path | None = None) -> None:
    """Append one query to the file as text, so comments and layout above it survive."""
    path = path or queries_file()
    existing = load_queries(path)
    if spec.slug in existing:
        raise QueryError(f"{path}: a query with slug {spec.slug!r} already exists")
    fields = spec.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
    item = yaml.safe_dump([{"slug": spec.slug, **fields}], sort_keys=False, allow_unicode=True)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    text = re.sub(r"^queries:\s*\[\]\s*$", "queries:", text, flags=re.MULTILINE)
    if not re.search(r"^queries:", text, re.MULTILINE):
        text += ("" if not text or text.endswith("\n") else "\n") + "queries:\n"
    if not text.endswith("\n"):
        text += "\n"
    indent = re.search(r"^queries:\s*\n(?:\s*#.*\n)*( *)-", text, re.MULTILINE)
    item = "".join((indent.group(1) if indent else "  ") + line for line in item.splitlines(keepends=True))
    original = path.read_text(encoding="utf-8") if path.is_file() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(path, text + item)
    try:
        appended = spec.slug in load_queries(path)
    except QueryError:
        appended = False
    if not appended:
        if original is None:
            path.unlink()
        else:
            _write_atomically(path, original)
        raise QueryError(f"{path}: could not append {spec.slug!r}; keep 'queries:' as the last top-level key")


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file whole, so a full disk or a crash never leaves half a queries file."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        if path.exists():
            shutil.copymode(path, temporary)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
