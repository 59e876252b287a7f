"""Adding a query from the Dagster UI: the ``add_query`` job's launchpad config is the query.

The op appends the query to config/queries.yaml and registers its partition, as
``hysem query add`` does; ``added_query_sensor`` then requests the whole graph for it
unless the launch said ``materialize: false``.
"""

from dagster import Config, Failure, MetadataValue, Nothing, OpExecutionContext, Out, Output, job, op
from pydantic import Field

from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.settings.environment import MISSING_CONTACT, mailto
from hysem_assets.settings.protocols import DEFAULT_PROTOCOL
from hysem_assets.settings.queries import (
    QueryError,
    QuerySpec,
    append_query,
    new_query_spec,
    queries_file,
)
from hysem_assets.sources.registry import default_searched, query_sources


class NewQuery(Config):
    """One search, as a researcher types it into the launchpad."""

    text: str = Field("", description="Search text for every source (unless a source gets its own below).")
    slug: str = Field("", description="Partition key; derived from the title or text when empty.")
    title: str = Field("", description="Human-readable name.")
    per_source: dict[str, str] = Field(
        default_factory=dict, description="A source's own syntax, when it differs from text: {source: text}."
    )
    sources: list[str] = Field(
        default_factory=lambda: list(default_searched()), description="Sources to search (of the source registry)."
    )
    date_from: str = Field("", description="First publication date, YYYY-MM-DD.")
    date_to: str = Field("", description="Last publication date, YYYY-MM-DD.")
    max_records: int = Field(10_000, description="Cap per source.")
    mailto: str = Field("", description="Contact e-mail for the APIs' polite pools (else $HYSEM_MAILTO).")
    protocol: str = Field(
        DEFAULT_PROTOCOL, description="Review protocol of config/protocols whose fields are extracted."
    )
    schedule: str = Field(
        "", description="A living review: daily, weekly, monthly or a cron string (UTC); empty: searched once."
    )
    materialize: bool = Field(True, description="Run the whole graph for the new query once it is added.")

    def spec(self) -> QuerySpec:
        spec = new_query_spec(
            self.text,
            slug=self.slug,
            title=self.title,
            sources=self.sources,
            per_source=self.per_source,
            date_from=self.date_from,
            date_to=self.date_to,
            max_records=self.max_records,
            mailto=self.mailto,
            protocol=self.protocol,
            schedule=self.schedule,
        )
        query_sources(spec)  # a name the source registry does not hold is refused here, not at the search
        return spec


@op(description="Append the query to config/queries.yaml and register its partition.", out=Out(Nothing))
def add_query(context: OpExecutionContext, config: NewQuery) -> Output:
    try:
        spec = config.spec()
        append_query(spec)
    except QueryError as exc:
        raise Failure(description=f"{exc} Fix the launchpad config and launch again.", allow_retries=False) from exc
    context.instance.add_dynamic_partitions(queries_partitions.name, [spec.slug])
    context.log.info(f"Added query {spec.slug!r} to {queries_file()} and registered its partition.")
    if not mailto(spec.mailto):
        context.log.warning(f"{MISSING_CONTACT} Full texts fail until one is set.")
    return Output(
        None,
        metadata={
            "slug": spec.slug,
            "sources": ", ".join(query_sources(spec)),
            "protocol": spec.protocol or DEFAULT_PROTOCOL,
            "query": MetadataValue.json(spec.model_dump(mode="json", exclude_none=True)),
            "materialize": config.materialize,
        },
    )


@job(description="Add a search query from the launchpad (see the config's fields); its whole graph runs next.")
def add_query_job() -> None:
    add_query()
