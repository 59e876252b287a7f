"""Deployment profiles and paths: which backends, endpoints and limits a run uses.

A profile is a YAML file in ``resources/`` chosen by ``HYSEM_PROFILE`` (a name such
as ``local`` or a path to a YAML file). Secrets never live in profiles: API keys and
the contact address come from environment variables when a client is built.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PROJECT_ROOT = Path(__file__).resolve().parents[1]
M = TypeVar("M", bound=BaseModel)

SourceName = Literal["pubmed", "openalex", "scopus", "crossref", "unpaywall", "zotero"]

#: The public endpoints, used when neither the environment, the profile nor the mirror say otherwise.
PRODUCTION_URLS: dict[str, str] = {
    "pubmed": "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
    "openalex": "https://api.openalex.org",
    "scopus": "https://api.elsevier.com",
    "crossref": "https://api.crossref.org",
    "unpaywall": "https://api.unpaywall.org",
    "zotero": "https://api.zotero.org",
}

#: Environment variables holding each source's API key (never written to config or metadata).
KEY_VARIABLES: dict[str, str] = {
    "pubmed": "NCBI_API_KEY",
    "openalex": "OPENALEX_API_KEY",
    "scopus": "SCOPUS_API_KEY",
    "zotero": "ZOTERO_API_KEY",
}


class ProfileError(ValueError):
    """A profile file is missing or does not match the expected shape."""


class SourceSettings(BaseModel):
    """Endpoint and politeness limits of one HTTP source."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    requests_per_second: float = Field(3.0, gt=0)
    #: Higher limit granted by some services (NCBI: 10/s) when an API key is set.
    requests_per_second_with_key: float | None = Field(None, gt=0)
    max_concurrency: int = Field(4, ge=1)
    page_size: int = Field(200, ge=1)


class HttpSettings(BaseModel):
    """Timeouts and retry policy shared by every HTTP client."""

    model_config = ConfigDict(extra="forbid")

    connect_timeout_s: float = Field(10.0, gt=0)
    read_timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(5, ge=0)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(60.0, ge=0)


class PdfSettings(BaseModel):
    """Limits of the open-access PDF downloads."""

    model_config = ConfigDict(extra="forbid")

    max_megabytes: float = Field(50.0, gt=0)
    #: Seconds for one response from request to last byte (a slow drip ends here).
    timeout_s: float = Field(300.0, gt=0)
    max_redirects: int = Field(5, ge=0)
    #: Request starts per second to any one host.
    requests_per_second: float = Field(2.0, gt=0)
    max_concurrency: int = Field(4, ge=1)


class Profile(BaseModel):
    """One deployment profile, as read from ``resources/<name>.yaml``."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str = ""
    #: Serve the bundled sample snapshot on 127.0.0.1 for every source without an explicit URL.
    mirror: bool = False
    sources: dict[SourceName, SourceSettings] = Field(default_factory=dict)
    http: HttpSettings = Field(default_factory=HttpSettings)
    pdfs: PdfSettings = Field(default_factory=PdfSettings)
    #: Per-asset placement and backends (devices, workers, models), validated by each asset.
    assets: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def source(self, name: str) -> SourceSettings:
        return self.sources.get(name) or SourceSettings()  # type: ignore[call-overload]

    def asset_settings(self, name: str, model: type[M]) -> M:
        """The ``assets.<name>`` section validated by ``model``; errors name the profile and asset."""
        try:
            return model.model_validate(self.assets.get(name) or {})
        except ValidationError as exc:
            raise ProfileError(f"Profile {self.name!r}: assets.{name} is invalid: {exc}") from exc


def hysem_home() -> Path:
    """Root of all state (Dagster home, asset storage, downloads, indexes)."""
    return Path(os.environ.get("HYSEM_HOME", ".hysem")).expanduser().resolve()


def dagster_home() -> Path:
    return hysem_home() / "dagster"


def config_dir() -> Path:
    """Domain configuration (queries, fields, dictionaries); overridable for tests and deployments."""
    return Path(os.environ.get("HYSEM_CONFIG_DIR", PROJECT_ROOT / "config")).resolve()


def profile_path(name: str | None = None) -> Path:
    name = name or os.environ.get("HYSEM_PROFILE", "local")
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return Path(name).expanduser().resolve()
    return PROJECT_ROOT / "resources" / f"{name}.yaml"


def load_profile(name: str | None = None) -> Profile:
    """Read and validate a profile; errors name the file and what to fix."""
    path = profile_path(name)
    if not path.is_file():
        available = sorted(p.stem for p in (PROJECT_ROOT / "resources").glob("*.yaml"))
        raise ProfileError(
            f"Profile file {path} does not exist. Set HYSEM_PROFILE to one of {available} "
            "or to the path of a profile YAML file."
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return Profile.model_validate(data)
    except (yaml.YAMLError, ValidationError) as exc:
        raise ProfileError(f"Profile {path} is invalid: {exc}") from exc


def url_override(source: str) -> str | None:
    """``HYSEM_<SOURCE>_URL`` wins over the profile, so one variable retargets a source."""
    return os.environ.get(f"HYSEM_{source.upper()}_URL") or None


def api_key(source: str) -> str | None:
    variable = KEY_VARIABLES.get(source)
    return (os.environ.get(variable) or None) if variable else None


MISSING_CONTACT = "Unpaywall needs a contact e-mail: set `mailto` on the query or HYSEM_MAILTO."


def mailto(declared: str | None = None) -> str | None:
    """The contact address sent to polite-pool APIs: the query's own, else ``HYSEM_MAILTO``."""
    return declared or os.environ.get("HYSEM_MAILTO") or None
