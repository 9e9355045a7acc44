#!/usr/bin/env bash
# The official MCP conformance suite against tests/conformance/tools, served by `tool-loader serve
# --transport http`, for both spec revisions and all three isolation modes.
#
#   .ci/conformance.sh [VENV]      VENV: a virtual environment with tool-loader installed
#                                  (default: .venv-conformance, made here with the mcp extra)
#
# The suite and the Node.js it needs are pinned in .ci/conformance/package-lock.json and installed
# with `npm ci`. Each revision runs with its baseline (.ci/conformance/expected-failures.<revision>.yml):
# only the scenarios the suite itself does not score, each with its reason.
# The suite fails a run on any other failure, and on a baseline entry that passes. See docs/conformance.md.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${1:-.venv-conformance}"
SUITE=.ci/conformance
REVISIONS=(2025-11-25 2026-07-28)
MODES=(thread process sandbox)

if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq || true
    apt-get install -y -qq npm >/dev/null
fi
npm ci --prefix "$SUITE" --no-audit --no-fund --loglevel=error
export PATH="$PWD/$SUITE/node_modules/.bin:$PATH"  # its node (22) before the system's
echo "conformance $(node -p "require('./$SUITE/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $(node --version)"

if [ ! -x "$VENV/bin/tool-loader" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q '.[mcp]'
fi

# The fixture tools are served from a copy: test_trigger_tool_change saves a tool file next to itself.
work="$(mktemp -d)"
server=""
stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=""
    fi
}
trap 'stop_server; [ -n "${KEEP_CONFORMANCE:-}" ] || rm -rf "$work"' EXIT
cp -r tests/conformance/tools "$work/tools"

failed=()
for mode in "${MODES[@]}"; do
    log="$work/serve-$mode.log"
    extra=()
    # the trigger tools save files beside themselves, as a user would: the sandbox must allow it
    [ "$mode" = sandbox ] && extra=(--sandbox-allow-write "$work/tools")
    "$VENV/bin/tool-loader" serve "$work/tools" --transport http --port 0 --isolation "$mode" \
        --no-history "${extra[@]}" >"$log" 2>&1 &
    server=$!
    url=""
    for _ in $(seq 1 600); do
        url="$(sed -n 's/^serving .* tools at \(http:\/\/[^ ]*\)$/\1/p' "$log" | head -n 1)"
        [ -n "$url" ] && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        cat "$log"
        echo "tool-loader serve ($mode isolation) did not start" >&2
        exit 1
    fi
    for revision in "${REVISIONS[@]}"; do
        echo "=== $revision, $mode isolation, $url"
        out="$work/conformance-$revision-$mode.txt"
        results="$work/results-$revision-$mode"
        if conformance server --url "$url" --requirements "$revision" --output-dir "$results" \
            --expected-failures "$SUITE/expected-failures.$revision.yml" >"$out" 2>&1; then
            sed -n '/^Total:/p' "$out"
        else
            sed -n '/^Total:/p; /Unexpected failures (not in baseline)/,$p' "$out"
            failed+=("$revision/$mode")
            # the unexpected scenarios' failing and warning checks (the baseline counts warnings too)
            python3 - "$out" "$results" <<'PY'
import json, pathlib, re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", pathlib.Path(sys.argv[1]).read_text())
section = text.split("Unexpected failures (not in baseline):", 1)[-1]
unexpected = {name.split(":")[0] for name in re.findall(r"^\s+\S+ (\S+)$", section, re.M)}
for checks in sorted(pathlib.Path(sys.argv[2]).glob("*/checks.json")):
    scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name)
    if scenario in unexpected:
        for check in json.loads(checks.read_text()):
            if check.get("status") in ("FAILURE", "WARNING"):
                print(f"  {scenario}: {check['status']} {check['id']}: {check.get('errorMessage')}")
PY
            tail -n 30 "$log"
        fi
    done
    stop_server
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "conformance failures beyond the baseline: ${failed[*]}" >&2
    exit 1
fi
echo "conformance: every scored scenario passes in both revisions and all three isolation modes"
