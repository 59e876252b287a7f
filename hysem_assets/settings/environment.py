"""What hysem reads from its environment: state and config folders, endpoints, secrets.

Secrets never live in profiles or config: API keys and the contact address come from
environment variables when a client is built. Bundled config, profiles and step tags
ship inside the package (``bundled/``), so an installed wheel finds them without a
source checkout; ``HYSEM_CONFIG_DIR`` points at a config folder of one's own.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tomllib
from pathlib import Path

#: Config, profiles and Kubernetes step tags shipped with the package.
BUNDLED = Path(__file__).resolve().parents[1] / "bundled"


def hysem_home() -> Path:
    """Root of all state (Dagster home, asset storage, downloads, indexes): see :func:`home_and_origin`."""
    return home_and_origin()[0]


def home_and_origin() -> tuple[Path, str]:
    """The state folder and what chose it, the same from any working directory.

    ``HYSEM_HOME`` when set; else ``.hysem`` in the project the package is installed from (a
    checkout, as ``make`` installs it); else ``hysem`` in the user's data folder (an installed wheel).
    """
    if explicit := os.environ.get("HYSEM_HOME"):
        return Path(explicit).expanduser().resolve(), "HYSEM_HOME"
    if (root := project_root()) is not None:
        return root / ".hysem", f"the project at {root}"
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share").expanduser().resolve()
    return data / "hysem", "the user data folder (XDG_DATA_HOME)"


@functools.cache
def project_root(package: Path = Path(__file__).resolve().parents[1]) -> Path | None:
    """The source checkout holding ``package``, when its ``pyproject.toml`` declares hysem; None for a wheel."""
    manifest = package.parent / "pyproject.toml"
    try:
        name = tomllib.loads(manifest.read_text(encoding="utf-8")).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return package.parent if name == "hysem" else None


#: Folders of ``HYSEM_HOME`` that hold deliverables for people (the flow, evidence tables, exports), not state.
DELIVERABLE_FOLDERS = ("review", "exports")


#: Below this many free megabytes on the disk holding ``HYSEM_HOME``, commands stop before opening its
#: stores: on a full disk SQLite cannot journal a read, and a memory-mapped store dies of SIGBUS.
MIN_FREE_MB = 64


class DiskFullError(OSError):
    """Too little free space on the disk of ``HYSEM_HOME`` to open hysem's state; the message says what to do."""


def free_megabytes(path: Path) -> float:
    """Free space on the disk holding ``path`` (or its nearest existing folder), in megabytes."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free / 2**20


def require_free_space() -> None:
    """Stop with :class:`DiskFullError` when the disk of ``HYSEM_HOME`` has under :data:`MIN_FREE_MB` free."""
    home = hysem_home()
    free = free_megabytes(home)
    if free < MIN_FREE_MB:
        raise DiskFullError(
            f"disk full: {free:.0f} MB free on the disk of {home}, and hysem needs {MIN_FREE_MB} MB to open its "
            "state. Free some space, or point HYSEM_HOME at a folder on another disk."
        )


def inside_state(path: Path) -> bool:
    """Whether ``path`` lies in ``HYSEM_HOME`` outside :data:`DELIVERABLE_FOLDERS`, where a file a command
    writes could overwrite an asset, a store or a cache that runs read back."""
    target, home = path.expanduser().resolve(), hysem_home()
    return target.is_relative_to(home) and not any(target.is_relative_to(home / f) for f in DELIVERABLE_FOLDERS)


def models_dir() -> Path:
    """Models exported for faster inference: ``HYSEM_MODELS_DIR`` (one folder several homes can share), else
    ``$HYSEM_HOME/models``."""
    return Path(os.environ.get("HYSEM_MODELS_DIR") or hysem_home() / "models").expanduser().resolve()


def dagster_home() -> Path:
    return hysem_home() / "dagster"


def shared_dir() -> Path:
    """A team server's own state: its PostgreSQL connection, workspace, logs and process ids."""
    return hysem_home() / "shared"


def assets_dir() -> Path:
    return hysem_home() / "assets"


def review_dir(slug: str) -> Path:
    """Where a query's deliverables are written: ``$HYSEM_HOME/review/<slug>``."""
    return hysem_home() / "review" / slug


def charts_dir(slug: str) -> Path:
    """Where the charts of a query's answers are written: ``$HYSEM_HOME/charts/<slug>``."""
    return hysem_home() / "charts" / slug


def asset_file(asset_key: str, partition: str, base: Path | None = None) -> Path:
    """Where ``raw_metadata/pubmed`` for one query lives; shared by the IO manager and the CLI
    (here, with no import beyond the standard library, so a command can find a table quickly)."""
    return (base or assets_dir()).joinpath(*asset_key.split("/"), f"{partition}.parquet")


def config_dir() -> Path:
    """Domain configuration (queries, fields, dictionaries): ``HYSEM_CONFIG_DIR``, else the bundled one."""
    return Path(os.environ.get("HYSEM_CONFIG_DIR", BUNDLED / "config")).resolve()


def profile_name() -> str:
    """``HYSEM_PROFILE``: a bundled profile's name or a path to one, default ``local``."""
    return os.environ.get("HYSEM_PROFILE", "local")


def use_profile(name: str) -> None:
    """Make ``name`` (a bundled profile or a path) the profile of this process and the processes it starts."""
    os.environ["HYSEM_PROFILE"] = name


def url_override(source: str) -> str | None:
    """``HYSEM_<SOURCE>_URL`` wins over the profile, so one variable retargets a source."""
    return os.environ.get(f"HYSEM_{source.upper()}_URL") or None


def variable(name: str | None) -> str | None:
    """The value of the environment variable a profile names (``api_key_env``, ``base_url_env``); None when unset or empty."""
    return (os.environ.get(name) or None) if name else None


def graph_server(uri: str) -> tuple[str, str | None]:
    """The Neo4j server to use and its password: ``HYSEM_NEO4J_URI`` wins over the profile's ``uri``."""
    return variable("HYSEM_NEO4J_URI") or uri, variable("HYSEM_NEO4J_PASSWORD")


def vector_server(url: str | None) -> tuple[str | None, str | None]:
    """The Qdrant server, if any, and its API key: ``HYSEM_QDRANT_URL`` wins over the profile's ``url``."""
    return variable("HYSEM_QDRANT_URL") or url, variable("HYSEM_QDRANT_API_KEY")


def zotero_library() -> tuple[str | None, str]:
    """``ZOTERO_LIBRARY_ID`` and ``ZOTERO_LIBRARY_TYPE`` (``user`` unless set)."""
    return variable("ZOTERO_LIBRARY_ID"), variable("ZOTERO_LIBRARY_TYPE") or "user"


def omp_threads() -> int | None:
    """``OMP_NUM_THREADS`` as a positive number, when set to one."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return None


def hysem_variables() -> list[tuple[str, str]]:
    """Every ``HYSEM_*`` variable, sorted: what a cached answer's state depends on."""
    return sorted((k, v) for k, v in os.environ.items() if k.startswith("HYSEM_"))


def executor_kind() -> str:
    """``HYSEM_EXECUTOR``: ``k8s`` runs each step in its own pod; anything else, subprocesses here."""
    return os.environ.get("HYSEM_EXECUTOR", "multiprocess")


MISSING_CONTACT = "Unpaywall needs a contact e-mail: set `mailto` on the query or HYSEM_MAILTO."


#: What a contact address sent to the APIs must look like: one address, no spaces or control characters.
EMAIL = re.compile(r"^[^@\s<>(),;:\"\x00-\x1f\x7f]+@[^@\s<>(),;:\"\x00-\x1f\x7f]+\.[A-Za-z]{2,}$")


class VariableError(ValueError):
    """An environment variable whose value cannot be used; the message names the variable."""


def mailto(declared: str | None = None) -> str | None:
    """The contact address sent to polite-pool APIs: the query's own, else ``HYSEM_MAILTO`` (checked like a flag)."""
    if declared:
        return declared
    value = os.environ.get("HYSEM_MAILTO") or None
    if value is not None and not EMAIL.match(value):
        raise VariableError(
            f"HYSEM_MAILTO={value!r} is not an e-mail address (like name@example.org); fix it or unset it"
        )
    return value
