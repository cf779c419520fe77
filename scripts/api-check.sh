#!/usr/bin/env bash
# Checks the server against openapi.yaml:
#  1. validates openapi.yaml (openapi-spec-validator);
#  2. starts the server on a free loopback port;
#  3. runs schemathesis against it (server errors, documented status codes, content types
#     and response schemas), bounded by a number of examples and a wall-clock timeout;
#  4. stops the server with SIGTERM and requires exit status 0.
# Tools come from the tests' venv (scripts/test-venv.sh).
# Env: BATCHDIFF_BIN (default .build/debug/batchdiff), API_CHECK_EXAMPLES (default 50 per
# operation), API_CHECK_TIMEOUT (seconds, default 180), API_CHECK_SEED (default 1, so
# CI replays the same cases; `random` draws a fresh seed and prints it).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'api-check: %s\n' "$*"; }
die() { printf 'api-check: FAIL: %s\n' "$*" >&2; exit 1; }

bin=${BATCHDIFF_BIN:-.build/debug/batchdiff}
examples=${API_CHECK_EXAMPLES:-50}
limit=${API_CHECK_TIMEOUT:-180}
# --- Tools ---------------------------------------------------------------------------------
scripts/test-venv.sh >/dev/null
venv=.build/venv

# --- 1. The spec -------------------------------------------------------------------------
"$venv/bin/openapi-spec-validator" openapi.yaml

# --- 2. The server -------------------------------------------------------------------------
[ -x "$bin" ] || die "no server binary at $bin (run 'swift build' first)"
log=$(mktemp); pid=
cleanup() { [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$bin" serve --host 127.0.0.1 --port 0 --max-wait 2 > "$log" 2>&1 &
pid=$!
url=
for _ in $(seq 300); do
  url=$(sed -n 's|.*batchdiff listening on \(http://[^ ]*\).*|\1|p' "$log" | head -1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "server exited before listening"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$log" >&2; die "no 'batchdiff listening on' line within 30 s"; }
say "server $pid at $url"

# --- 3. schemathesis -----------------------------------------------------------------------
say "schemathesis: up to $examples examples per operation, at most ${limit}s"
st_args=(--config-file "$PWD/scripts/schemathesis.toml" run "$PWD/openapi.yaml" --url "$url"
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
  --max-examples "$examples" --request-timeout 70 --workers 1 --no-color
  --generation-database none)
seed=${API_CHECK_SEED:-1}
[ "$seed" = random ] || st_args+=(--seed "$seed")
st_status=0
# Run from .build/api-check so schemathesis' crash store (for `st replay ID`) stays there.
mkdir -p .build/api-check
(cd .build/api-check && timeout --kill-after=10 "$limit" "../../$venv/bin/st" "${st_args[@]}") || st_status=$?

# --- 4. Stop -------------------------------------------------------------------------------
kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "the server died during the run"; }
kill -TERM "$pid"
srv_status=0
for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { tail -20 "$log" >&2; die "server still running 15 s after SIGTERM"; }
wait "$pid" || srv_status=$?
pid=
[ "$st_status" != 124 ] || die "schemathesis did not finish within ${limit}s"
[ "$st_status" = 0 ] || die "schemathesis found problems (exit $st_status); see above (replay: cd .build/api-check && ../venv/bin/st replay ID)"
[ "$srv_status" = 0 ] || { tail -20 "$log" >&2; die "server exited with $srv_status after SIGTERM (want 0)"; }
say "OK (spec valid, schemathesis passed, clean shutdown)"
