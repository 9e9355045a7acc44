"""The files under ``deploy/``: Kubernetes manifests validated offline, and a Dockerfile that starts a real serve.

``kubernetes-validate`` ships the Kubernetes JSON schemas, so no cluster and
no network are needed; the test is skipped only when the package is absent (and fails then
in CI, which installs the test extra).
"""

from __future__ import annotations

import copy
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from serving import serve_http
from support import require_module, write

from loader.console.cli import build_parser, parse
from loader.console.serve import http_options

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))

_TEST_EXTRA = "pip install -e '.[test]' (the test extra)"
kubernetes_validate = require_module("kubernetes_validate", _TEST_EXTRA)
yaml = require_module("yaml", _TEST_EXTRA)


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


DRAIN_MARGIN = 5
"""Seconds past the shutdown grace for the answers to be flushed and the process to exit."""


@pytest.mark.parametrize("kind_file", ["deployment-git-sync.yaml", "deployment-configmap.yaml"])
def test_deployments_give_a_draining_replica_time_to_finish_its_calls(kind_file: str) -> None:
    """preStop pauses while the endpoint leaves the Service; then SIGTERM drains for --shutdown-grace;
    the pod's grace period must cover both, or the kubelet's SIGKILL cuts the calls the drain protects."""
    deployment = next(doc for where, doc in documents() if where == f"{kind_file}:Deployment")
    pod = deployment["spec"]["template"]["spec"]
    server = containers(kind_file)["tool-loader"]
    pause_command = server["lifecycle"]["preStop"]["exec"]["command"]
    assert pause_command[0] == "sleep", pause_command
    pause = float(pause_command[1])
    assert pause >= 1, (
        "a pause shorter than an endpoint update lets the balancer send work to a stopped replica"
    )
    args = build_parser().parse_args([*dockerfile_instruction("ENTRYPOINT")[1:], *server["args"]])
    assert pod["terminationGracePeriodSeconds"] >= pause + args.shutdown_grace + DRAIN_MARGIN, (
        pod["terminationGracePeriodSeconds"],
        pause,
        args.shutdown_grace,
    )


def test_the_image_guards_metrics_with_the_tokens_that_guard_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image sets a token file; /metrics (tool names, call counts) must not stay open beside it."""
    tokens = tmp_path / "tokens"
    tokens.write_text("scrape-and-call\n")
    env = dict(instruction_env("ENV"))
    assert env["TOOL_LOADER_AUTH_TOKEN_FILE"] == "/var/run/tool-loader/tokens/tokens"
    monkeypatch.setenv("TOOL_LOADER_AUTH_TOKEN_FILE", str(tokens))  # the Secret, mounted here instead
    args = parse([*dockerfile_instruction("ENTRYPOINT")[1:], *dockerfile_instruction("CMD")]).args
    options = http_options(args)
    assert options.token_verifier is not None
    assert options.metrics_require_auth is True


def test_git_sync_shares_an_empty_dir_with_the_server() -> None:
    found = containers("deployment-git-sync.yaml")
    assert {"tool-loader", "git-sync"} <= set(found)
    shared = {mount["name"] for mount in found["git-sync"]["volumeMounts"]}
    assert shared & {mount["name"] for mount in found["tool-loader"]["volumeMounts"]} == {"tools"}


def instructions() -> dict[str, Any]:
    """deploy/Dockerfile parsed by Docker's own parser (the ``dockerfile`` package); last one of each kind."""
    dockerfile = require_module("dockerfile", _TEST_EXTRA)
    return {command.cmd: command for command in dockerfile.parse_file(str(DEPLOY / "Dockerfile"))}


def instruction_env(name: str) -> list[tuple[str, str]]:
    """The ``KEY=value`` pairs of an ENV instruction of deploy/Dockerfile."""
    values = list(instructions()[name].value)
    return list(zip(values[0::2], values[1::2], strict=True))


def dockerfile_instruction(name: str) -> list[str]:
    """A JSON-form instruction of deploy/Dockerfile as its argument list."""
    command = instructions()[name]
    assert command.json, f"{name} should use the JSON (exec) form so signals reach tool-loader"
    return list(command.value)


def test_the_dockerfile_runs_serve_as_a_non_root_user_with_a_healthcheck() -> None:
    found = instructions()
    base = found["FROM"].value[0]
    assert base.startswith("python:") and base.endswith("-slim")
    assert found["USER"].value[0].split(":")[0] not in ("0", "root")
    entrypoint = dockerfile_instruction("ENTRYPOINT")
    assert shlex.join(entrypoint).startswith("tool-loader serve --transport http --host 0.0.0.0")
    args = build_parser().parse_args([*entrypoint[1:], *dockerfile_instruction("CMD")])
    assert (args.transport, args.host, args.port) == ("http", "0.0.0.0", 8000)
    assert found["HEALTHCHECK"].value[0] == "CMD"


def test_the_healthcheck_command_passes_on_a_live_server_and_fails_without_one(
    tmp_path: Path, tools_dir: Path
) -> None:
    """The image's HEALTHCHECK, run here against a real ``serve`` (its port swapped for a free one)."""
    command = [
        sys.executable if part == "python" else part for part in dockerfile_instruction("HEALTHCHECK")[1:]
    ]
    write(
        tools_dir / "echo.py",
        "from loader import tool\n\n@tool\ndef echo(text: str) -> str:\n    return text\n",
    )
    with serve_http(tools_dir, tmp_path, wait_ready=True) as served:
        live = [part.replace("127.0.0.1:8000", f"127.0.0.1:{served.port}") for part in command]
        assert subprocess.run(live, capture_output=True, timeout=30, check=False).returncode == 0
    assert subprocess.run(live, capture_output=True, timeout=30, check=False).returncode != 0
