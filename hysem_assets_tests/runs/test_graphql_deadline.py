"""The GraphQL client that launches backfills gives up on a webserver that drips its answer."""

from __future__ import annotations

import time

import pytest

from hysem_assets.runs.backfill import GraphQLError, graphql
from hysem_assets_tests.dripping_server import dripping_server


def test_a_webserver_that_drips_its_answer_is_cut_at_the_deadline():
    with dripping_server() as url:
        started = time.monotonic()
        with pytest.raises(GraphQLError, match=f"No Dagster webserver answered at {url} .*Start it with `hysem ui`"):
            graphql(url, "{ ok }", timeout=1.0)
        assert time.monotonic() - started < 3
