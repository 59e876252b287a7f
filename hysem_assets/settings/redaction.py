"""One redaction path: secrets are masked wherever text leaves the process.

A secret is the value of an environment variable that holds a key, token or password:
the API keys the source registry names, any variable whose name
ends like ``_API_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD``, and any variable a
profile names as one (``api_key_env: HYSEM_LLM_API_KEY``). :func:`redact` masks those
values (and their URL- and JSON-escaped forms) in any text, together with secret query
parameters and authentication headers whatever their value, so an error page that
echoes the request cannot carry a key into a log line, an exception or metadata.

:class:`SecretFilter` applies :func:`redact` to a log record: its message, its exception
text and the Dagster event it carries (failure metadata, error messages, materialization
metadata). :func:`install` puts that one filter in front of every log record the process
creates and of every Dagster log manager, so hysem's loggers, Dagster's event log, the
console and the compute logs all receive masked text, whatever the source of the text.
"""

from __future__ import annotations

import functools
import html
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
#: Shorter values are not treated as secrets: masking "1" or "true" would garble every line.
MIN_SECRET_LENGTH = 6
#: Variables holding secrets whatever their name; the rest are found by :data:`_SECRET_NAME`.
SECRET_VARIABLES = frozenset({"HYSEM_NEO4J_PASSWORD", "HYSEM_QDRANT_API_KEY"})
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
_SECRET_PARAMS = frozenset({"api_key", "apikey", "key", "token", "access_token", "insttoken"})
_PARAM_IN_TEXT = re.compile(
    rf"(?P<name>[?&;](?:{'|'.join(sorted(_SECRET_PARAMS, key=len, reverse=True))})=)[^&#\s\"'<>\\]+",
    re.IGNORECASE,
)
_HEADER_IN_TEXT = re.compile(
    r"(?P<name>\b(?:authorization|proxy-authorization|x-els-apikey|x-els-insttoken|x-api-key|zotero-api-key)"
    r"(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?(?:(?:bearer|basic|token)\s+)?)[^\s\"',;&<>\\]+",
    re.IGNORECASE,
)

_declared: set[str] = set()


def declare_secret_variables(names: Iterable[str]) -> None:
    """Treat these environment variables as secrets too (names a profile gives)."""
    _declared.update(name for name in names if name)


def declare_profile_secrets(config: Mapping[str, Any]) -> None:
    """Every variable a profile names with an ``*_env`` key that reads as a secret."""
    declare_secret_variables(_profile_secret_variables(config))


def _profile_secret_variables(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and key.endswith("_env") and _SECRET_NAME.search(key[:-4]):
                if isinstance(item, str):
                    yield item
            else:
                yield from _profile_secret_variables(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _profile_secret_variables(item)


def secret_values() -> frozenset[str]:
    """The secrets set in the environment right now."""
    names = SECRET_VARIABLES | _declared | {name for name in os.environ if _SECRET_NAME.search(name)}
    values = (os.environ.get(name) or "" for name in names)
    return frozenset(value for value in values if len(value) >= MIN_SECRET_LENGTH)


@functools.lru_cache(maxsize=8)
def _value_pattern(values: frozenset[str]) -> re.Pattern[str] | None:
    if not values:
        return None
    escaped = {form for value in values for form in (json.dumps(value)[1:-1], html.escape(value)) if form != value}
    alternatives = [_encodings(value) for value in sorted(values, key=len, reverse=True)]
    alternatives += [re.escape(form) for form in sorted(escaped, key=len, reverse=True)]
    return re.compile("|".join(alternatives))


def _encodings(value: str) -> str:
    """A pattern matching ``value`` however much of it a server URL- or form-encoded when echoing it."""
    parts = []
    for char in value:
        if char.isalnum() or char in "-._~":
            parts.append(re.escape(char))
            continue
        encoded = "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
        options = [re.escape(char), "(?i:" + re.escape(encoded) + ")"] + (["\\+"] if char == " " else [])
        parts.append("(?:" + "|".join(options) + ")")
    return "".join(parts)


def redact(text: str) -> str:
    """``text`` with every secret value, secret query parameter and auth header masked."""
    if not text:
        return text
    pattern = _value_pattern(secret_values())
    if pattern is not None:
        text = pattern.sub(MASK, text)
    text = _PARAM_IN_TEXT.sub(lambda m: m.group("name") + MASK, text)
    return _HEADER_IN_TEXT.sub(lambda m: m.group("name") + MASK, text)


def redact_url(url: str) -> str:
    """The URL with secret query parameters masked, safe for logs, metadata and errors."""
    parts = urlsplit(url)
    if parts.query:
        query = [
            (k, MASK if k.lower() in _SECRET_PARAMS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
        url = urlunsplit(parts._replace(query=urlencode(query, safe="*:,/")))
    return redact(url)


def redact_event(event: Any) -> Any:
    """A Dagster event (or any serdes value) with secrets masked; the same object when clean."""
    from dagster import deserialize_value, serialize_value

    try:
        text = serialize_value(event)
        masked = redact(text)
        return event if masked == text else deserialize_value(masked, type(event))
    except Exception:  # logging must never fail a run; the record's message is still masked
        return event


class SecretFilter(logging.Filter):
    """Masks secrets in a record's message, exception, stack and Dagster event; never drops it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed %-format: leave it to the handler to report
            return True
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        event = record.__dict__.get("dagster_event")
        if event is not None:
            record.__dict__["dagster_event"] = redact_event(event)
        return True


SECRET_FILTER = SecretFilter()
_installed: set[str] = set()


def install() -> None:
    """Put :data:`SECRET_FILTER` in front of every log record of this process (idempotent).

    Records are masked when they are created (the log record factory), so whichever
    logger or handler later sees them, hysem's, a library's or Dagster's console, gets
    masked text.
    """
    if "records" in _installed:
        return
    _installed.add("records")
    create_record = logging.getLogRecordFactory()

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = create_record(*args, **kwargs)
        SECRET_FILTER.filter(record)
        return record

    logging.setLogRecordFactory(masked_record)


def install_on_dagster() -> None:
    """Also filter every Dagster log manager (idempotent): Dagster attaches its events
    (failures, metadata) to a record only after it is created, and a record passes the
    manager before it reaches the run's event log and loggers. Called where Dagster runs
    (:func:`hysem_assets.defs.resources.build_resources`), so a command that never runs Dagster
    never imports it."""
    install()
    if "dagster" in _installed:
        return
    _installed.add("dagster")
    from dagster import DagsterLogManager

    initialize = DagsterLogManager.__init__

    @functools.wraps(initialize)
    def filtered_init(self: DagsterLogManager, *args: Any, **kwargs: Any) -> None:
        initialize(self, *args, **kwargs)
        self.addFilter(SECRET_FILTER)

    DagsterLogManager.__init__ = filtered_init  # type: ignore[method-assign]
