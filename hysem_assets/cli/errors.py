"""What the ``hysem`` command says when something fails: one line that says what to do.

A traceback tells a user nothing they can act on; the cause buried in it usually does
(a read-only or full ``HYSEM_HOME``, a missing folder, a bad config value). This module
finds that cause in an exception's chain, however deep Dagster or SQLAlchemy wrapped it,
and words it as one line; ``--debug`` adds the traceback. Both are masked for secrets.
"""

from __future__ import annotations

import errno
import re
import traceback
from collections.abc import Iterator

from hysem_assets.runs.instance import database_down
from hysem_assets.settings.environment import MIN_FREE_MB, free_megabytes, hysem_home
from hysem_assets.settings.redaction import redact

#: Errors whose own message is already the one line a user needs.
_PLAIN = (
    "QueryError",
    "ProfileError",
    "ConfigFileError",
    "ProtocolError",
    "SchemaError",
    "BibliographyError",
    "DiskFullError",
    "TaggerUnavailable",
    "FindingsModelUnavailable",
    "EntityModelUnavailable",
    "DamagedAssetError",
    "AttachmentError",
    "OutdatedScreening",
    "ImportRefused",
    "ExportError",
    "SharedServerError",
    "InstanceDatabaseDown",
)
_READ_ONLY = ("readonly database", "read-only file system", "unable to open database file", "permission denied")
_FULL = ("database or disk is full", "no space left on device")


def one_line(error: BaseException) -> str:
    """The cause of ``error`` as one line, secrets masked."""
    return redact(" ".join(_describe(error).split()))


def traceback_text(error: BaseException) -> str:
    """The full traceback, for ``--debug``, secrets masked."""
    return redact("".join(traceback.format_exception(error)))


def _describe(error: BaseException) -> str:
    chain = list(_chain(error))
    for cause in chain:
        if type(cause).__name__ in _PLAIN:
            return str(cause)
    for cause in chain:
        if isinstance(cause, OSError) and cause.errno is not None:
            return _os_error(cause)
    for cause in chain:
        if type(cause).__name__ == "DagsterPostgresException" or "psycopg2" in type(cause).__module__:
            return database_down(_first_line(next((c for c in chain if "psycopg2" in type(c).__module__), cause)))
    for cause in chain:
        text = str(cause).lower()
        if type(cause).__name__ == "OperationalError" or "sqlite" in type(cause).__module__:
            if any(marker in text for marker in _FULL) or ("disk i/o error" in text and _disk_full()):
                return f"No space left for hysem's state in {hysem_home()} ({_first_line(cause)}). {_MOVE_HOME}"
            if any(marker in text for marker in _READ_ONLY):
                return f"hysem cannot write its state in {hysem_home()} ({_first_line(cause)}). {_WRITABLE_HOME}"
            if "locked" in text:
                return f"hysem's state in {hysem_home()} is locked by another process; wait for it and try again."
    return f"{type(error).__name__}: {_first_line(error)} (run with --debug for the traceback)"


_MOVE_HOME = "Free some space, or point HYSEM_HOME at a folder on another disk."
_WRITABLE_HOME = "Make it writable, or point HYSEM_HOME at a writable folder."


def _disk_full() -> bool:
    """SQLite reports a full disk met while it journals as a plain I/O error: the free space tells."""
    return free_megabytes(hysem_home()) < MIN_FREE_MB


def _os_error(error: OSError) -> str:
    target = error.filename
    in_home = target is None or str(target).startswith(str(hysem_home()))
    if error.errno == errno.ENOSPC:
        where = f" writing {target}" if target else ""
        return f"No space left on the device{where}. " + (_MOVE_HOME if in_home else "Free some space there.")
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"Cannot write {target or 'a file'}: {error.strerror}." + (f" {_WRITABLE_HOME}" if in_home else "")
    if error.errno == errno.ENOENT and target:
        return f"{target}: no such file or folder."
    return f"{target}: {error.strerror}." if target else f"{error.strerror or error}."


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error``, then what caused it, as deep as the wrappers go."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)  # SQLAlchemy keeps the driver's error here
        if isinstance(orig, BaseException):
            yield orig
        current = current.__cause__ or current.__context__


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def run_failures(result) -> list[str]:
    """One line per failed step of a Dagster run: the step and why it failed (for a failed blocking check,
    what the check said)."""
    checks = _failed_checks(result)
    lines = []
    for event in result.all_events:
        if event.event_type_value != "STEP_FAILURE":
            continue
        error = event.event_specific_data.error
        while error is not None and error.cause is not None and error.cls_name in _WRAPPERS:
            error = error.cause  # the user code's own exception
        message = _QUALIFIED.sub(r"\1: ", error.message.strip()) if error else "failed"
        if error is not None and error.cls_name == "DagsterAssetCheckFailedError" and checks.get(event.step_key):
            message = "; ".join(checks[event.step_key])
        for plain in ("Failure", *_PLAIN):  # hysem's own Failure descriptions and plain errors are the message
            message = message.removeprefix(f"{plain}: ")
        if any(marker in message.lower() for marker in _FULL):
            message = f"{message.rstrip('.')}. {_MOVE_HOME}"
        lines.append(redact(f"{event.step_key.replace('__', '/')}: {' '.join(message.split())}"))
    return lines


def _failed_checks(result) -> dict[str, list[str]]:
    """Per step, each failed check as ``check NAME failed: DESCRIPTION``."""
    failed: dict[str, list[str]] = {}
    for event in result.all_events:
        evaluation = event.event_specific_data if event.event_type_value == "ASSET_CHECK_EVALUATION" else None
        if evaluation is not None and not evaluation.passed:
            said = f": {evaluation.description}" if evaluation.description else ""
            failed.setdefault(event.step_key, []).append(f"check {evaluation.check_name} failed{said}")
    return failed


#: Dagster's wrappers around the exception of a step's own code (its body, or the IO manager loading an input).
_WRAPPERS = ("DagsterExecutionStepExecutionError", "DagsterExecutionLoadInputError")
_QUALIFIED = re.compile(r"^(?:[A-Za-z_][\w]*\.)+([A-Za-z_]\w*): ")
