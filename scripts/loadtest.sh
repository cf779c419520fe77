#!/usr/bin/env bash
# Load test: batchdiff vs. a plain-libmicrohttpd floor (bench/floor.c), loopback only.
#
# For each endpoint (GET /healthz, POST /diff small) starts the floor and batchdiff at its
# default log level side by side, and loads one at a time (never both at once: the box has
# 2 cores; the other waits idle), alternating round by round, and which goes first (ABBA),
# so that the machine's drift falls on both alike, each round under
#   wrk -t$LOADTEST_THREADS -c$LOADTEST_CONNS -d${LOADTEST_SECONDS}s --latency
# then takes the best of $LOADTEST_ROUNDS rounds per server, and prints req/s, p99 and the
# batchdiff/floor ratio against the targets (issue 12), and the server's CPU time per request
# (user and system, from /proc; the lowest of the rounds), steadier than throughput when two
# cores are shared with wrk; all of it $LOADTEST_RUNS times, then each ratio's median and
# spread over the runs.
#
# Env:
#   LOADTEST_SECONDS  measured seconds per round (default 10)
#   LOADTEST_ROUNDS   rounds per server and endpoint, the best counts (default 2)
#   LOADTEST_RUNS     runs of everything, for the spread (default 3)
#   LOADTEST_WARMUP   unmeasured warm-up seconds per server (default 1, 0 = none)
#   LOADTEST_THREADS  wrk threads (default 2)   LOADTEST_CONNS  wrk connections (default 64)
#   LOADTEST_ENDPOINTS  which to load, of "healthz diff" (default both)
#   LOADTEST_STRICT   1 = exit 3 if a run saw errors (default 0)
#   BATCHDIFF_BIN     server binary (default .build/release/batchdiff; not built here)
#   BATCHDIFF_ARGS    its argv, {PORT} is replaced (default "serve --host 127.0.0.1 --port {PORT}";
#                     "{PORT}" automatically when BATCHDIFF_BIN is the floor binary)
#   FLOOR_BIN         floor binary (default .build/floor, compiled from bench/floor.c)
#   BASELINE_ARGS     when set, the baseline is batchdiff itself with this argv instead of the
#                     floor ({PORT} replaced), and both targets are 95%: a paired A/B of one
#                     option, e.g. what access logging costs (make loadtest-logging)
# Dry run of the harness, floor vs floor:
#   BATCHDIFF_BIN=.build/floor scripts/loadtest.sh
# Raw wrk output goes to bench/out/loadtest-<timestamp>/ (git-ignored).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

SECS=${LOADTEST_SECONDS:-10}
ROUNDS=${LOADTEST_ROUNDS:-2}
RUNS=${LOADTEST_RUNS:-3}
WARMUP=${LOADTEST_WARMUP:-1}
THREADS=${LOADTEST_THREADS:-2}
CONNS=${LOADTEST_CONNS:-64}
STRICT=${LOADTEST_STRICT:-0}
FLOOR_BIN=${FLOOR_BIN:-.build/floor}
BASELINE_ARGS=${BASELINE_ARGS:-}
BATCHDIFF_BIN=${BATCHDIFF_BIN:-.build/release/batchdiff}
if [[ -z ${BATCHDIFF_ARGS+x} ]]; then
  if [[ $(basename "$BATCHDIFF_BIN") == floor ]]; then BATCHDIFF_ARGS='{PORT}'
  else BATCHDIFF_ARGS='serve --host 127.0.0.1 --port {PORT}'; fi
fi
HOST=127.0.0.1   # loopback only, never anything else

die() { echo "loadtest: $*" >&2; exit 1; }
for tool in wrk curl python3 pkg-config cc timeout; do
  command -v "$tool" >/dev/null || die "missing tool: $tool"
done

# --- build the floor --------------------------------------------------------
mkdir -p .build
if [[ $FLOOR_BIN == .build/floor ]]; then
  # shellcheck disable=SC2046  # pkg-config output must word-split
  cc -O2 -Wall -o .build/floor bench/floor.c $(pkg-config --cflags --libs libmicrohttpd)
fi
[[ -x $FLOOR_BIN ]] || die "floor binary not found: $FLOOR_BIN"
[[ -x $BATCHDIFF_BIN ]] || die "server binary not found: $BATCHDIFF_BIN (build it first: swift build -c release)"

# --- work files -------------------------------------------------------------
OUT=bench/out/loadtest-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
BODY=$OUT/diff-small.json
LUA=$OUT/post-diff.lua

# Small diff: 20 short items -> 20 items; 2 deletes, 2 inserts, 1 move.
python3 - "$BODY" <<'PY'
import json, sys
old = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
       "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]
new = [x for x in old if x not in ("bravo", "foxtrot")]      # 2 deletes
new.insert(3, "uniform"); new.insert(8, "victor")            # 2 inserts
new.remove("mike"); new.insert(2, "mike")                    # 1 move
assert len(old) == 20 and len(new) == 20
with open(sys.argv[1], "w") as f:
    json.dump({"old": old, "new": new}, f, separators=(",", ":"))
PY

python3 - "$BODY" "$LUA" <<'PY'
import json, sys
body = open(sys.argv[1]).read()
with open(sys.argv[2], "w") as f:
    f.write('wrk.method = "POST"\n')
    f.write('wrk.headers["Content-Type"] = "application/json"\n')
    f.write('wrk.body = %s\n' % json.dumps(body))   # JSON string literal is a valid Lua string here (ASCII body)
PY

# --- server lifecycle ---------------------------------------------------------
declare -A SERVER_PID=() PORT_OF=()
CHILD_PID=
cleanup() {
  if [[ -n $CHILD_PID ]]; then kill -TERM "$CHILD_PID" 2>/dev/null || true; wait "$CHILD_PID" 2>/dev/null || true; CHILD_PID=; fi
  local pid
  for pid in "${SERVER_PID[@]}"; do
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  SERVER_PID=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# run a command in the background and wait, so INT/TERM traps fire at once (not after it ends)
run_child() {
  local rc=0
  "$@" & CHILD_PID=$!
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=
  return "$rc"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_server NAME -> sets SERVER_PID[NAME], PORT_OF[NAME]; waits for GET /healthz == 200
start_server() {
  local name=$1 bin args log pid PORT
  PORT=$(free_port)
  PORT_OF[$name]=$PORT
  if [[ $name == floor && -n $BASELINE_ARGS ]]; then bin=$BATCHDIFF_BIN; args=$BASELINE_ARGS
  elif [[ $name == floor ]]; then bin=$FLOOR_BIN; args='{PORT}'
  else bin=$BATCHDIFF_BIN; args=$BATCHDIFF_ARGS; fi
  args=${args//\{PORT\}/$PORT}
  log=$OUT/$name.log
  # shellcheck disable=SC2086  # args is a word list by design
  "$bin" $args >>"$log" 2>&1 &
  pid=$!
  SERVER_PID[$name]=$pid
  for _ in $(seq 150); do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2; die "$name exited during start-up ($bin $args)"
    fi
    if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://$HOST:$PORT/healthz" || true) == 200 ]]; then
      return 0
    fi
    sleep 0.1
  done
  cat "$log" >&2; die "$name not ready on $HOST:$PORT after 15s"
}

# sanity-check that the endpoint answers 200 before hammering it (a fast 4xx is not a result)
check_endpoint() {
  local name=$1 ep=$2 code PORT=${PORT_OF[$1]}
  if [[ $ep == diff ]]; then
    code=$(curl -s -o "$OUT/$name-diff-response.json" -w '%{http_code}' --max-time 5 \
      -H 'Content-Type: application/json' --data-binary "@$BODY" "http://$HOST:$PORT/diff")
  else
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$HOST:$PORT/healthz")
  fi
  [[ $code == 200 ]] || die "$name $ep answered HTTP $code (see $OUT)"
}

# warm_up NAME EP: one unmeasured wrk run
warm_up() {
  local name=$1 ep=$2 url PORT=${PORT_OF[$1]}
  local -a extra=()
  if [[ $ep == diff ]]; then url=http://$HOST:$PORT/diff; extra=(-s "$LUA")
  else url=http://$HOST:$PORT/healthz; fi
  if (( WARMUP > 0 )); then
    run_child timeout $((WARMUP + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${WARMUP}s" "${extra[@]}" "$url" >/dev/null \
      || die "wrk warm-up failed for $name $ep"
  fi
}

# cpu_seconds PID: the user and system CPU time the process has used
cpu_seconds() {
  sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($12 + $13) / hz }'
}

# run_wrk NAME EP FILE -> sets RPS P99_MS ERRS CPU_US (server CPU microseconds a request); raw output in FILE
run_wrk() {
  local name=$1 ep=$2 file=$3 url PORT=${PORT_OF[$1]} cpu_before
  cpu_before=$(cpu_seconds "${SERVER_PID[$name]}")
  local -a extra=()
  if [[ $ep == diff ]]; then url=http://$HOST:$PORT/diff; extra=(-s "$LUA")
  else url=http://$HOST:$PORT/healthz; fi
  run_child timeout $((SECS + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency "${extra[@]}" "$url" >"$file" \
    || die "wrk failed for $name $ep (see $file)"
  CPU_US=$(awk -v before="$cpu_before" -v after="$(cpu_seconds "${SERVER_PID[$name]}")" \
    '/ requests in / { printf "%.2f", ($1 > 0 ? 1e6 * (after - before) / $1 : 0) }' "$file")
  RPS=$(awk '/^Requests\/sec:/ {print $2}' "$file")
  # " 99%  1.23ms" (units us/ms/s; plain number = us in some wrk builds)
  P99_MS=$(awk '$1 == "99%" {
      v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
      if (u == "us" || u == "") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000
      printf "%.3f", v; exit }' "$file")
  # errors: non-2xx/3xx responses + socket errors (connect/read/write/timeout)
  ERRS=$(awk '/Non-2xx or 3xx responses:/ {n += $NF}
              /Socket errors:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) { x = $i; sub(/,/, "", x); n += x } }
              END {print n + 0}' "$file")
  [[ -n $RPS && -n $P99_MS ]] || { cat "$file" >&2; die "could not parse wrk output for $name $ep"; }
}

# --- run --------------------------------------------------------------------
read -ra ENDPOINTS <<<"${LOADTEST_ENDPOINTS:-healthz diff}"
declare -A LABEL=([healthz]="GET /healthz" [diff]="POST /diff small")
declare -A TARGET=([healthz]=95 [diff]=75)
if [[ -n $BASELINE_ARGS ]]; then TARGET[diff]=95; fi

echo "loadtest: wrk -t$THREADS -c$CONNS -d${SECS}s, best of $ROUNDS rounds per server (+${WARMUP}s warm-up), $RUNS runs, $(nproc) cores"
baseline=$FLOOR_BIN
if [[ -n $BASELINE_ARGS ]]; then baseline="$BATCHDIFF_BIN $BASELINE_ARGS"; fi
echo "loadtest: floor=$baseline  batchdiff=$BATCHDIFF_BIN $BATCHDIFF_ARGS  raw output: $OUT"
MACHINE=()
ERRORS=0
for run in $(seq "$RUNS"); do
  for ep in "${ENDPOINTS[@]}"; do
    declare -A BEST=([floor,rps]=0 [floor,p99]=0 [batchdiff,rps]=0 [batchdiff,p99]=0 [floor,cpu]=1e9 [batchdiff,cpu]=1e9)
    for name in floor batchdiff; do
      start_server "$name"
      check_endpoint "$name" "$ep"
    done
    for name in floor batchdiff; do warm_up "$name" "$ep"; done
    for round in $(seq "$ROUNDS"); do
      order=(floor batchdiff)
      (( round % 2 == 1 )) || order=(batchdiff floor)  # ABBA: neither always goes first
      for name in "${order[@]}"; do        # one at a time, never concurrently
        run_wrk "$name" "$ep" "$OUT/$name-$ep-run$run-round$round.txt"
        (( ERRS == 0 )) || ERRORS=$((ERRORS + ERRS))
        if awk -v a="$RPS" -v b="${BEST[$name,rps]}" 'BEGIN { exit !(a > b) }'; then BEST[$name,rps]=$RPS BEST[$name,p99]=$P99_MS; fi
        if awk -v a="$CPU_US" -v b="${BEST[$name,cpu]}" 'BEGIN { exit !(a < b) }'; then BEST[$name,cpu]=$CPU_US; fi
      done
    done
    cleanup
    for name in floor batchdiff; do
      printf 'loadtest: run %d  %-9s %-17s %12s req/s  p99 %9s ms  %6s us CPU a request\n' "$run" "$name" "${LABEL[$ep]}" "${BEST[$name,rps]}" "${BEST[$name,p99]}" "${BEST[$name,cpu]}"
    done
    ratio=$(awk -v b="${BEST[batchdiff,rps]}" -v f="${BEST[floor,rps]}" 'BEGIN { printf "%.1f", (f > 0 ? 100 * b / f : 0) }')
    printf 'loadtest: run %d  %-17s batchdiff/floor %s%% (target >= %s%%)\n' "$run" "${LABEL[$ep]}" "$ratio" "${TARGET[$ep]}"
    MACHINE+=("LOADTEST run=$run endpoint=$ep floor_rps=${BEST[floor,rps]} batchdiff_rps=${BEST[batchdiff,rps]} ratio_pct=$ratio target_pct=${TARGET[$ep]} floor_p99_ms=${BEST[floor,p99]} batchdiff_p99_ms=${BEST[batchdiff,p99]} floor_cpu_us=${BEST[floor,cpu]} batchdiff_cpu_us=${BEST[batchdiff,cpu]}")
  done
done

echo
printf '%s\n' "${MACHINE[@]}" | tee "$OUT/summary.txt"
echo
# Median and spread of each figure over the runs.
python3 - "$OUT/summary.txt" <<'PY'
import re, statistics, sys
rows = [dict(re.findall(r"(\w+)=(\S+)", line)) for line in open(sys.argv[1])]
for endpoint, label in (("healthz", "GET /healthz"), ("diff", "POST /diff small")):
    picked = [r for r in rows if r["endpoint"] == endpoint]
    if not picked:
        continue
    def figure(key, form):
        values = sorted(float(r[key]) for r in picked)
        return f"{form(statistics.median(values))} ({form(values[0])} to {form(values[-1])})"
    ratio = statistics.median(float(r["ratio_pct"]) for r in picked)
    for r in picked:
        r["cpu_pct"] = 100 * float(r["batchdiff_cpu_us"]) / float(r["floor_cpu_us"])
    target = float(picked[0]["target_pct"])
    print(f"{label:17}  batchdiff {figure('batchdiff_rps', lambda v: f'{v:,.0f}')} req/s, "
          f"floor {figure('floor_rps', lambda v: f'{v:,.0f}')} req/s, ratio {figure('ratio_pct', lambda v: f'{v:.0f}%')}; "
          f"target >= {target:.0f}%: {'PASS' if ratio >= target else 'FAIL'} (median of {len(picked)} runs); "
          f"CPU a request {figure('batchdiff_cpu_us', lambda v: f'{v:.2f}')} us against {figure('floor_cpu_us', lambda v: f'{v:.2f}')} us, "
          f"{figure('cpu_pct', lambda v: f'{v:.0f}%')}")
PY
if (( ERRORS > 0 )); then echo "loadtest: $ERRORS errors (non-2xx answers or socket errors) in the runs: see $OUT"; fi

if [[ $STRICT == 1 ]] && (( ERRORS > 0 )); then exit 3; fi
exit 0
