"""Dagster resources: the active profile's scholarly API endpoints."""

from __future__ import annotations

from dataclasses import replace

from dagster import ConfigurableResource, InitResourceContext
from pydantic import PrivateAttr

from hysem_assets.mirror import MirrorServer, default_snapshot_dir
from hysem_assets.queries import METADATA_SOURCES, QuerySpec
from hysem_assets.settings import Profile, load_profile
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, no_progress
from hysem_assets.sources.endpoints import fetch, lookup, needs_mirror, resolve_endpoint
from hysem_assets.sources.lookups import LookupOutcome

MIRRORED_SOURCES = (*METADATA_SOURCES, "crossref", "unpaywall")
#: The bundled mirror checks that a key is sent, as Scopus does, but any value passes.
MIRROR_API_KEY = "sample-snapshot"


class ScholarlyApis(ConfigurableResource):
    """Endpoints of PubMed, OpenAlex, Scopus, Crossref and Unpaywall for the active profile.

    When the profile is the embedded default, the bundled sample snapshot is served
    on 127.0.0.1 for the duration of the step, so the same HTTP clients run offline.
    """

    profile: str = ""  # empty: HYSEM_PROFILE, else "local"

    _profile: Profile = PrivateAttr()
    _mirror: MirrorServer | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._profile = load_profile(self.profile or None)
        if needs_mirror(self._profile, list(MIRRORED_SOURCES)):
            self._mirror = MirrorServer(default_snapshot_dir())
            self._mirror.start()

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        if self._mirror is not None:
            self._mirror.stop()

    @property
    def active_profile(self) -> Profile:
        return self._profile

    def endpoint(self, source: str, spec: QuerySpec | None = None) -> Endpoint:
        mirror_urls = self._mirror.base_urls if self._mirror else None
        endpoint = resolve_endpoint(source, self._profile, spec.mailto if spec else None, mirror_urls)
        served_by_mirror = mirror_urls is not None and endpoint.base_url == mirror_urls.get(source, "").rstrip("/")
        if served_by_mirror and not endpoint.api_key:
            endpoint = replace(endpoint, api_key=MIRROR_API_KEY)
        return endpoint

    def fetch(self, source: str, spec: QuerySpec, progress: ProgressCallback = no_progress) -> FetchOutcome:
        return fetch(self.endpoint(source, spec), spec, self._profile.http, progress)

    def lookup(self, source: str, dois: list[str], spec: QuerySpec, progress: ProgressCallback = no_progress) -> LookupOutcome:
        return lookup(self.endpoint(source, spec), dois, self._profile.http, progress)
