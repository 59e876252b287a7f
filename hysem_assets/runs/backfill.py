"""Backfills of query partitions through a running Dagster webserver's GraphQL API.

Launching through the webserver (not in-process) hands the backfill to the daemon, as the
UI's own "Launch backfill" does: runs are queued, respect the instance's run and pool
limits, and show up in the UI's Backfills tab.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from hysem_assets.defs.partitions import queries_partitions

#: Backfill states after which nothing more will run.
FINISHED = frozenset({"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"})
#: Run states after which a run does nothing more.
RUN_FINISHED = frozenset({"SUCCESS", "FAILURE", "CANCELED"})


class GraphQLError(RuntimeError):
    """The webserver answered with errors, or not at all."""


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    status: str
    partition: str | None


@dataclass(frozen=True)
class BackfillStatus:
    id: str
    status: str
    partitions: list[str]
    runs: list[RunInfo] = field(default_factory=list)
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED and all(run.status in RUN_FINISHED for run in self.runs)

    @property
    def succeeded(self) -> bool:
        return (
            self.finished
            and self.status in {"COMPLETED", "COMPLETED_SUCCESS"}
            and all(run.status == "SUCCESS" for run in self.runs)
        )


def _read_before(response, deadline: float) -> bytes:
    """The whole body, or TimeoutError once ``deadline`` (monotonic) has passed between two reads: a socket
    timeout alone lets a server that drips its answer hold the command for ever."""
    chunks = []
    while chunk := response.read1(1 << 16):
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise TimeoutError("no complete answer in time")
    return b"".join(chunks)


def graphql(url: str, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
    """POST one GraphQL document to ``{url}/graphql`` and return its ``data``; the answer must be whole by
    ``timeout`` after the request (a read already waiting may add one more ``timeout``)."""
    deadline = time.monotonic() + timeout
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        f"{url.rstrip('/')}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = json.loads(_read_before(response, deadline))
    except urllib.error.HTTPError as exc:  # the webserver answers a Python error of a mutation with status 500
        try:
            payload = json.loads(_read_before(exc, deadline))
        except ValueError:
            raise GraphQLError(f"The Dagster webserver at {url} failed (HTTP {exc.code}).") from exc
    except (urllib.error.URLError, TimeoutError) as exc:
        raise GraphQLError(f"No Dagster webserver answered at {url} ({exc}). Start it with `hysem ui`.") from exc
    if payload.get("errors"):
        raise GraphQLError("; ".join(error.get("message", str(error)) for error in payload["errors"]))
    return payload["data"]


def _raise_for_type(result: dict, expected: str, action: str) -> dict:
    if result.get("__typename") != expected:
        raise GraphQLError(f"{action} failed: {result.get('message') or result}")
    return result


REPOSITORIES = """
query { repositoriesOrError { __typename ... on RepositoryConnection { nodes { name location { name } jobs { name } } }
  ... on PythonError { message } } }
"""


def repository_selector(url: str, job: str = "query_job") -> dict[str, str]:
    """The code location and repository that define ``job`` (hysem's definitions)."""
    result = graphql(url, REPOSITORIES)["repositoriesOrError"]
    _raise_for_type(result, "RepositoryConnection", "Listing code locations")
    for node in result["nodes"]:
        if any(j["name"] == job for j in node["jobs"]):
            return {"repositoryLocationName": node["location"]["name"], "repositoryName": node["name"]}
    raise GraphQLError(f"No loaded code location defines {job!r}; is the workspace hysem's workspace.yaml?")


ADD_PARTITION = """
mutation($repo: RepositorySelector!, $name: String!, $key: String!) {
  addDynamicPartition(repositorySelector: $repo, partitionsDefName: $name, partitionKey: $key) {
    __typename ... on PythonError { message } ... on UnauthorizedError { message }
    ... on DuplicateDynamicPartitionError { partitionName } } }
"""


def register_partitions(url: str, slugs: list[str], repo: dict[str, str] | None = None) -> list[str]:
    """Add missing ``queries`` partitions; returns the ones that were new."""
    repo = repo or repository_selector(url)
    added = []
    for slug in slugs:
        variables = {"repo": repo, "name": queries_partitions.name, "key": slug}
        result = graphql(url, ADD_PARTITION, variables)["addDynamicPartition"]
        if result["__typename"] == "AddDynamicPartitionSuccess":
            added.append(slug)
        elif result["__typename"] != "DuplicateDynamicPartitionError":
            raise GraphQLError(f"Registering partition {slug!r} failed: {result.get('message') or result}")
    return added


LAUNCH = """
mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
  __typename ... on LaunchBackfillSuccess { backfillId }
  ... on PythonError { message } ... on UnauthorizedError { message } ... on InvalidStepError { invalidStepKey }
  ... on InvalidOutputError { invalidOutputName } ... on PartitionSetNotFoundError { message }
  ... on RunConflict { message } ... on ConflictingExecutionParamsError { message }
  ... on PresetNotFoundError { message } ... on InvalidSubsetError { message } } }
"""


def launch_backfill(
    url: str,
    slugs: list[str],
    assets: list[str] | None = None,
    job: str = "query_job",
    title: str | None = None,
) -> str:
    """Register ``slugs`` as partitions, then backfill them; returns the backfill id.

    ``assets`` (keys like ``raw_metadata/pubmed``) backfills just those assets; without it
    the backfill runs ``job`` (the whole graph) once per partition.
    """
    if not slugs:
        raise ValueError("Name at least one query slug to backfill.")
    repo = repository_selector(url, job)
    register_partitions(url, slugs, repo)
    params: dict = {"partitionNames": slugs, "title": title or f"hysem backfill: {', '.join(slugs)}"}
    if assets:
        params["assetSelection"] = [{"path": key.split("/")} for key in assets]
    else:
        params["selector"] = {"partitionSetName": f"{job}_partition_set", "repositorySelector": repo}
    result = graphql(url, LAUNCH, {"params": params})["launchPartitionBackfill"]
    return _raise_for_type(result, "LaunchBackfillSuccess", "Launching the backfill")["backfillId"]


STATUS = """
query($id: String!) { partitionBackfillOrError(backfillId: $id) { __typename
  ... on PartitionBackfill { id status partitionNames error { message }
    runs { runId status tags { key value } } }
  ... on BackfillNotFoundError { message } ... on PythonError { message } } }
"""


def backfill_status(url: str, backfill_id: str) -> BackfillStatus:
    """The backfill's state and the state of each run it launched so far."""
    result = graphql(url, STATUS, {"id": backfill_id})["partitionBackfillOrError"]
    _raise_for_type(result, "PartitionBackfill", f"Reading backfill {backfill_id}")
    runs = [
        RunInfo(
            run["runId"],
            run["status"],
            next((t["value"] for t in run["tags"] if t["key"] == "dagster/partition"), None),
        )
        for run in result["runs"]
    ]
    error = (result.get("error") or {}).get("message")
    return BackfillStatus(result["id"], result["status"], result["partitionNames"] or [], runs, error)


def wait_for_backfill(
    url: str, backfill_id: str, timeout: float = 1800, poll: float = 2.0, on_update=None
) -> BackfillStatus:
    """Poll until the backfill and all its runs finish; ``on_update`` sees each new state."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        current = backfill_status(url, backfill_id)
        if on_update and current != last:
            on_update(current)
        last = current
        if current.finished:
            return current
        if time.monotonic() > deadline:
            raise TimeoutError(f"Backfill {backfill_id} still {current.status} after {timeout:.0f} s.")
        time.sleep(poll)
