"""From a partition key to its configuration: the query declared for it and the protocol it names.

The one path from a slug to a :class:`~hysem_assets.settings.queries.QuerySpec` and a
:class:`~hysem_assets.settings.protocols.Protocol`. Assets reach it through the
``review_config`` resource; commands call :func:`review_for` directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from hysem_assets.settings.protocols import Protocol, load_protocol
from hysem_assets.settings.queries import QuerySpec, get_query


@dataclass(frozen=True)
class Review:
    """A declared query and its review protocol."""

    spec: QuerySpec
    protocol: Protocol


def review_for(slug: str) -> Review:
    """Query ``slug`` as config/queries.yaml declares it, with the protocol it names.

    An undeclared slug raises :class:`~hysem_assets.settings.queries.QueryError` naming the
    declared ones; a protocol that does not load raises its
    :class:`~hysem_assets.settings.protocols.ProtocolError`.
    """
    spec = get_query(slug)
    return Review(spec, load_protocol(spec.protocol))
