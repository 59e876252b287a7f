"""The deployment examples in deploy/ stay valid: they parse, agree with each other and with
the definitions, and the GPU step tags pass dagster-k8s's own validation."""

from __future__ import annotations

import configparser
import json
from pathlib import Path

import pytest
import yaml

from hysem_assets_tests.paths import PROJECT_ROOT

DEPLOY = PROJECT_ROOT / "deploy"
K8S = DEPLOY / "k8s"
#: Top-level keys of the ``dagster-k8s/config`` tag (dagster_k8s.job.UserDefinedDagsterK8sConfig).
K8S_CONFIG_KEYS = {
    "container_config",
    "pod_template_spec_metadata",
    "pod_spec_config",
    "job_config",
    "job_metadata",
    "job_spec_config",
    "merge_behavior",
}


def _load(path: Path) -> list:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _step_tags() -> dict[str, dict]:
    return _load(K8S / "gpu-step-tags.yaml")[0]["assets"]


def test_every_yaml_file_parses() -> None:
    files = sorted(DEPLOY.rglob("*.yaml"))
    assert {f.name for f in files} >= {"values.yaml", "services.yaml", "gpu-step-tags.yaml"}
    for path in files:
        assert _load(path), path


def test_step_tags_cover_exactly_the_gpu_pool_assets() -> None:
    from hysem_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    gpu_assets = {
        key.to_user_string() for key in graph.get_all_asset_keys() if graph.assets_def_for_key(key).op.pool == "gpu"
    }
    assert set(_step_tags()) == gpu_assets


def test_step_tags_have_the_dagster_k8s_shape() -> None:
    for asset, tags in _step_tags().items():
        assert set(tags) == {"dagster-k8s/config"}, asset
        config = tags["dagster-k8s/config"]
        assert set(config) <= K8S_CONFIG_KEYS, asset
        resources = config["container_config"]["resources"]
        assert resources["limits"]["nvidia.com/gpu"] == resources["requests"]["nvidia.com/gpu"] == "1", asset


def test_step_tags_pass_dagster_k8s_validation() -> None:
    pytest.importorskip("dagster_k8s")
    from dagster_k8s.job import get_user_defined_k8s_config
    from dagster_k8s.models import k8s_model_from_dict
    from kubernetes.client import V1Container, V1PodSpec

    for tags in _step_tags().values():
        config = get_user_defined_k8s_config({key: json.dumps(value) for key, value in tags.items()})
        container = k8s_model_from_dict(V1Container, {"name": "step", **config.container_config})
        assert container.resources.limits["nvidia.com/gpu"] == "1"
        k8s_model_from_dict(V1PodSpec, {"containers": [{"name": "step"}], **config.pod_spec_config})


def test_helm_values_point_at_the_services_and_the_pool() -> None:
    values = _load(K8S / "values.yaml")[0]
    docs = _load(K8S / "services.yaml")
    services = {d["metadata"]["name"]: {p["port"] for p in d["spec"]["ports"]} for d in docs if d["kind"] == "Service"}
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert deployment["dagsterApiGrpcArgs"] == ["--module-name", "hysem_assets.definitions"]
    env = {e["name"]: e["value"] for e in deployment["env"]}
    for variable in ("HYSEM_LLM_URL", "HYSEM_NEO4J_URI", "HYSEM_QDRANT_URL"):
        host, port = env[variable].split("://")[1].split("/")[0].split(":")
        assert int(port) in services[host], variable
    instance = yaml.safe_load((PROJECT_ROOT / "config" / "dagster.yaml").read_text())
    assert values["concurrency"]["pools"]["defaultLimit"] == instance["concurrency"]["pools"]["default_limit"]


def test_services_select_their_workloads() -> None:
    docs = _load(K8S / "services.yaml")
    workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] in {"Deployment", "StatefulSet"}}
    for service in (d for d in docs if d["kind"] == "Service"):
        workload = workloads[service["metadata"]["name"]]
        template = workload["spec"]["template"]
        assert (
            workload["spec"]["selector"]["matchLabels"] == template["metadata"]["labels"] == service["spec"]["selector"]
        )
        container_ports = {p["containerPort"] for c in template["spec"]["containers"] for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= container_ports


def test_systemd_units_run_each_service_of_the_team_server() -> None:
    """One unit per service ``hysem shared up`` starts, each running it as ``hysem shared run`` does."""
    from hysem_assets.cli import main
    from hysem_assets.runs.shared import SERVICES

    run = main.commands["shared"].commands["run"]
    units = {}
    for path in sorted((DEPLOY / "systemd").glob("*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.read(path)
        program, *arguments = parser["Service"]["ExecStart"].split()
        assert Path(program).name == "hysem" and arguments[:2] == ["shared", "run"], path.name
        assert parser["Service"]["EnvironmentFile"].endswith("hysem.env"), path.name
        assert run.params[0].type.convert(arguments[2], None, None) == arguments[2]
        units[arguments[2]] = path.name
    assert sorted(units) == sorted(SERVICES)
    assert units == {service: f"hysem-{service}.service" for service in SERVICES}


def test_gpu_assets_carry_the_step_tags() -> None:
    from dagster import AssetKey

    from hysem_assets.definitions import defs
    from hysem_assets.defs.placement import gpu_step_tags

    graph = defs.resolve_asset_graph()
    for name in ("parsed_docs", "extracted_fields", "canonical_terms", "vector_index", "answers", "preference_log"):
        op_tags = graph.assets_def_for_key(AssetKey.from_user_string(name)).op.tags
        assert json.loads(op_tags["dagster-k8s/config"]) == gpu_step_tags(name)["dagster-k8s/config"], name
