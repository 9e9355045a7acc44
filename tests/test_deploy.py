"""The files under ``deploy/``: Kubernetes manifests validated offline, and a Dockerfile that starts a real serve.

``kubernetes-validate`` ships the Kubernetes JSON schemas, so no cluster and
no network are needed; the test is skipped only when the package is absent.
"""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from loader.cli import build_parser

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))

kubernetes_validate = pytest.importorskip(
    "kubernetes_validate", reason="kubernetes-validate is not installed"
)
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")


def documents() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in MANIFESTS:
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                found.append((f"{path.name}:{document['kind']}", document))
    return found


def validate(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


@pytest.mark.parametrize(("where", "document"), documents(), ids=[where for where, _ in documents()])
def test_every_manifest_validates_against_the_kubernetes_schemas(
    where: str, document: dict[str, Any]
) -> None:
    validate(document)


def test_a_misspelt_field_is_caught() -> None:
    deployment = next(doc for where, doc in documents() if where == "deployment-git-sync.yaml:Deployment")
    broken = copy.deepcopy(deployment)
    broken["spec"]["replica"] = 3
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


def containers(kind_file: str) -> dict[str, dict[str, Any]]:
    deployment = next(doc for where, doc in documents() if where == f"{kind_file}:Deployment")
    spec = deployment["spec"]["template"]["spec"]
    return {container["name"]: container for container in spec["containers"]}


@pytest.mark.parametrize("kind_file", ["deployment-git-sync.yaml", "deployment-configmap.yaml"])
def test_deployments_probe_serve_and_mount_tokens(kind_file: str) -> None:
    server = containers(kind_file)["tool-loader"]
    assert server["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert server["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert server["resources"]["requests"]
    assert any(mount["mountPath"] == "/var/run/tool-loader/tokens" for mount in server["volumeMounts"])
    assert {"name": "TOOL_LOADER_AUTH_TOKEN_FILE", "value": "/var/run/tool-loader/tokens/tokens"} in server[
        "env"
    ]
    entrypoint = dockerfile_instruction("ENTRYPOINT")
    args = build_parser().parse_args([*entrypoint[1:], *server["args"]])
    assert (args.transport, args.host, args.stateless) == ("http", "0.0.0.0", True)


def test_git_sync_shares_an_empty_dir_with_the_server() -> None:
    found = containers("deployment-git-sync.yaml")
    assert {"tool-loader", "git-sync"} <= set(found)
    shared = {mount["name"] for mount in found["git-sync"]["volumeMounts"]}
    assert shared & {mount["name"] for mount in found["tool-loader"]["volumeMounts"]} == {"tools"}


def dockerfile_instruction(name: str) -> list[str]:
    """A JSON-form instruction of deploy/Dockerfile as its argument list."""
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith(name + " "):
            return list(json.loads(line[len(name) + 1 :]))
    raise AssertionError(f"no {name} in deploy/Dockerfile")


def test_the_dockerfile_runs_serve_as_a_non_root_user_with_a_healthcheck() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    base = next(line.split()[1] for line in text.splitlines() if line.startswith("FROM "))
    assert base.startswith("python:") and base.endswith("-slim")
    user = next(line.split()[1] for line in text.splitlines() if line.startswith("USER "))
    assert user.split(":")[0] not in ("0", "root")
    assert "HEALTHCHECK" in text and "/healthz" in text
    entrypoint = dockerfile_instruction("ENTRYPOINT")
    assert entrypoint[:2] == ["tool-loader", "serve"]
    args = build_parser().parse_args([*entrypoint[1:], *dockerfile_instruction("CMD")])
    assert (args.transport, args.host, args.port) == ("http", "0.0.0.0", 8000)
    assert shlex.join(entrypoint).startswith("tool-loader serve --transport http --host 0.0.0.0")
