#!/usr/bin/env bash
# Checks the Dockerfile's runtime stage without a Docker engine:
#  1. builds the binary with scripts/build-release.sh (the build stage's command);
#  2. debootstraps a minimal Debian root for the runtime image's suite and runs the runtime
#     stage's RUN instructions in it (so the package list is the Dockerfile's own), cached
#     under /var/tmp keyed by those instructions and the mirror;
#  3. copies the binary in, checks ldd, starts ENTRYPOINT+CMD chrooted as the stage's USER
#     with its ENV (port changed to a free one), as PID 1 of its own PID namespace with
#     /proc and /dev mounted like in a container;
#  4. requires the HEALTHCHECK command (run inside the root) and curl from outside to get
#     200 from /healthz and the playground from /, then SIGTERM and exit status 0;
#  5. starts `serve --store sqlite:/data/feeds.db` on the image's /data volume (owned by
#     the runtime user), PUTs a feed, restarts, and requires the same version and data.
# Usage: scripts/docker-check.sh [--root-only] [--binary PATH]
#   --root-only   prepare (or reuse) the runtime root and stop
#   --binary PATH use this binary instead of building one
# Env: BATCHDIFF_DEBIAN_MIRROR, BATCHDIFF_DEBIAN_SECURITY_MIRROR override the mirrors read
# from apt's sources here (default deb.debian.org).
# Needs root (re-runs itself with sudo otherwise), debootstrap (installed if missing),
# unshare/nsenter/chroot (util-linux, coreutils), curl, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
say() { printf 'docker-check: %s\n' "$*"; }
die() { printf 'docker-check: FAIL: %s\n' "$*" >&2; exit 1; }

root_only=0 binary=
while [ $# -gt 0 ]; do
  case $1 in
    --root-only) root_only=1 ;;
    --binary) binary=$(realpath "${2:?--binary needs a path}"); shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done

# Build as the calling user (not root), then continue as root.
if [ "$root_only" = 0 ] && [ -z "$binary" ]; then
  scripts/build-release.sh .build/docker-check
  binary=$repo/.build/docker-check/batchdiff
fi
if [ "$(id -u)" != 0 ]; then
  args=(); [ "$root_only" = 1 ] && args+=(--root-only); [ -n "$binary" ] && args+=(--binary "$binary")
  exec sudo --preserve-env=BATCHDIFF_DEBIAN_MIRROR,BATCHDIFF_DEBIAN_SECURITY_MIRROR "$0" "${args[@]}"
fi
command -v debootstrap >/dev/null || {
  say "installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# --- Read the runtime stage (the last stage) out of the Dockerfile --------------------
eval "$(python3 - Dockerfile <<'PY'
import json, re, shlex, sys
text = open(sys.argv[1]).read()
text = re.sub(r'\\\n', ' ', text)                      # join continuation lines
lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith('#')]
stages, cur = [], None
for l in lines:
    word, _, rest = l.partition(' ')
    if word.upper() == 'FROM':
        cur = {'from': rest.split()[0], 'run': [], 'env': [], 'user': 'root'}
        stages.append(cur)
    elif cur is not None:
        w = word.upper()
        if w == 'RUN': cur['run'].append(rest)
        elif w == 'ENV':
            if '=' not in rest.split()[0]: sys.exit('ENV must use the KEY=VALUE form')
            cur['env'] += shlex.split(rest)
        elif w == 'USER': cur['user'] = rest.strip()
        elif w == 'COPY' and rest.startswith('--from='): cur['copy_dest'] = rest.split()[-1]
        elif w == 'ENTRYPOINT': cur['entrypoint'] = json.loads(rest)
        elif w == 'CMD': cur['cmd'] = json.loads(rest)
        elif w == 'HEALTHCHECK': cur['health'] = json.loads(rest.split(' CMD ', 1)[1])
rt = stages[-1]
m = re.fullmatch(r'debian:(\w+)(-slim)?', rt['from'])
if not m: sys.exit('runtime stage must be FROM debian:SUITE[-slim], got ' + rt['from'])
pkgs = []
for r in rt['run']:
    for seg in re.findall(r'apt-get install([^&;|]*)', r):
        pkgs += [t for t in seg.split() if not t.startswith('-')]
out = {'suite': m.group(1), 'run_script': '\n'.join(['set -e'] + rt['run']),
       'packages': ' '.join(pkgs), 'user': rt['user'], 'copy_dest': rt.get('copy_dest', ''),
       }
for k, v in out.items(): print(f'rt_{k}={shlex.quote(v)}')
for k in ('env', 'entrypoint', 'cmd', 'health'):
    print(f'rt_{k}=(' + ' '.join(shlex.quote(x) for x in rt.get(k, [])) + ')')
PY
)"
[ -n "$rt_packages" ] || die "no 'apt-get install' packages found in the runtime stage"
[ -n "$rt_copy_dest" ] || die "no 'COPY --from=build' in the runtime stage"
say "runtime stage: debian $rt_suite, packages: $rt_packages, user: $rt_user"

# --- The mirror apt uses here -----------------------------------------------------------
read -r found_mirror found_security < <(python3 - "$rt_suite" <<'PY'
import glob, re, sys
suite = sys.argv[1]; main = sec = None
def see(uri, suites):
    global main, sec
    uri = uri.rstrip('/')
    if suite in suites and main is None: main = uri
    if suite + '-security' in suites and sec is None: sec = uri
for f in sorted(glob.glob('/etc/apt/sources.list') + glob.glob('/etc/apt/sources.list.d/*.list')):
    for l in open(f):
        t = re.sub(r'\[[^]]*\]', ' ', l.split('#')[0]).split()
        if t[:1] == ['deb'] and len(t) >= 3: see(t[1], [t[2]])
for f in sorted(glob.glob('/etc/apt/sources.list.d/*.sources')):
    for stanza in open(f).read().split('\n\n'):
        d = {}
        for l in stanza.splitlines():
            if ':' in l and not l.startswith('#'):
                k, v = l.split(':', 1); d[k.strip().lower()] = v.split()
        if 'deb' in d.get('types', []) and d.get('enabled', ['yes']) != ['no']:
            for u in d.get('uris', []): see(u, d.get('suites', []))
print(main or 'http://deb.debian.org/debian', sec or 'http://deb.debian.org/debian-security')
PY
)
mirror=${BATCHDIFF_DEBIAN_MIRROR:-$found_mirror}
security=${BATCHDIFF_DEBIAN_SECURITY_MIRROR:-$found_security}
say "mirror: $mirror (security: $security)"

# --- Cached runtime root -----------------------------------------------------------------
key=$(printf '%s\n' "$rt_suite" "$mirror" "$rt_run_script" | sha256sum | cut -c1-12)
cache_base=/var/tmp/batchdiff-$rt_suite-root
root=$cache_base-$key
tmp=
srv_pid=
cleanup() {
  [ -z "$srv_pid" ] || kill -KILL "$srv_pid" 2>/dev/null || true
  [ -z "$tmp" ] || rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Prefix: runs "chroot ARGS..." in a private mount namespace (every mount made there goes
# away with it, so nothing can be left mounted) and a new PID namespace (the command is
# PID 1, as in a container), with /proc and /dev mounted in the root. First arg: the root.
in_root=(unshare --mount --propagation private --pid --fork --kill-child -- /bin/sh -c '
  dir=$1; shift
  mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev" && exec chroot "$@"' sh)
base_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

if [ -d "$root" ]; then
  say "reusing cached root $root"
else
  for old in "$cache_base"-*; do [ -d "$old" ] && rm -rf --one-file-system "$old"; done
  tmp=$root.tmp.$$
  say "debootstrap --variant=minbase $rt_suite (no cache yet; a few minutes)"
  start=$SECONDS
  unshare --mount --propagation private -- \
    debootstrap --variant=minbase "$rt_suite" "$tmp" "$mirror" > "$tmp.log" 2>&1 \
    || { tail -20 "$tmp.log" >&2; rm -f "$tmp.log"; die "debootstrap failed"; }
  rm -f "$tmp.log"
  # Same apt sources as the debian image (deb822, with updates and security).
  rm -f "$tmp/etc/apt/sources.list"
  cat > "$tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $rt_suite $rt_suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $rt_suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cp /etc/resolv.conf "$tmp/etc/resolv.conf"
  say "running the runtime stage's RUN instructions in the root"
  env -i "${base_env[@]}" HOME=/root "${in_root[@]}" "$tmp" "$tmp" /bin/sh -c "$rt_run_script" > "$tmp.log" 2>&1 \
    || { tail -20 "$tmp.log" >&2; rm -f "$tmp.log"; die "runtime stage RUN failed in the root"; }
  rm -f "$tmp.log"
  for p in $rt_packages; do
    chroot "$tmp" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' \
      || die "package $p is not installed in the root"
  done
  mv "$tmp" "$root"; tmp=
  say "root ready in $((SECONDS - start))s: $root"
fi
[ "$root_only" = 0 ] || { say "OK (root only)"; exit 0; }

# --- Run the binary as the runtime stage would -----------------------------------------
[ -x "$binary" ] || die "no binary at $binary"
install -m 0755 "$binary" "$root$rt_copy_dest"
missing=$(chroot "$root" ldd "$rt_copy_dest" | grep 'not found' || true)
[ -z "$missing" ] || die "libraries missing in the runtime image:
$missing"
say "ldd in the root:"; chroot "$root" ldd "$rt_copy_dest" | sed 's/^/    /'

ids=$(chroot "$root" getent passwd "$rt_user") || die "user $rt_user not in the root"
uid=$(cut -d: -f3 <<<"$ids"); gid=$(cut -d: -f4 <<<"$ids"); home=$(cut -d: -f6 <<<"$ids")
[ "$uid" != 0 ] || die "runtime stage runs as root"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_env=("${base_env[@]}" HOME="$home"
         "${rt_env[@]}" BATCHDIFF_PORT="$port")
log=$(mktemp); tmp=$log

# How many servers have printed their "listening" line to $log.
listening_lines() { grep -c 'batchdiff listening on http://' "$log" || true; }

# Starts ENTRYPOINT with ARGS (default CMD) chrooted as the stage's USER; waits for its
# "listening" line (`started` counts the servers started so far, all logging to $log).
start_server() {
  local args=("$@"); [ ${#args[@]} -gt 0 ] || args=("${rt_cmd[@]}")
  say "starting ${rt_entrypoint[*]} ${args[*]} as $rt_user ($uid:$gid), port $port"
  env -i "${run_env[@]}" "${in_root[@]}" "$root" --userspec="$uid:$gid" "$root" \
    "${rt_entrypoint[@]}" "${args[@]}" >> "$log" 2>&1 &
  ns_pid=$!; srv_pid=
  for _ in $(seq 50); do srv_pid=$(pgrep -P "$ns_pid" || true); [ -n "$srv_pid" ] && break; sleep 0.1; done
  [ -n "$srv_pid" ] || die "server process did not start"
  for _ in $(seq 300); do
    [ "$(listening_lines)" -gt "$started" ] && break
    kill -0 "$ns_pid" 2>/dev/null || { cat "$log" >&2; die "server exited before listening"; }
    sleep 0.1
  done
  [ "$(listening_lines)" -gt "$started" ] || { cat "$log" >&2; die "no 'listening' line in 30s"; }
  started=$((started + 1))
  [ "$(stat -c %u "/proc/$srv_pid")" = "$uid" ] || die "server is not running as uid $uid"
}

# SIGTERM, as docker stop sends it: the server must exit 0 within 15 s.
stop_server() {
  kill -TERM "$srv_pid"
  local status=0
  for _ in $(seq 150); do kill -0 "$ns_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$ns_pid" 2>/dev/null && { cat "$log" >&2; die "server still running 15s after SIGTERM"; }
  wait "$ns_pid" || status=$?
  srv_pid=
  [ "$status" = 0 ] || { cat "$log" >&2; die "exit status $status after SIGTERM (want 0; note it runs as PID 1)"; }
  say "SIGTERM: exit 0"
}

started=0
start_server

# HEALTHCHECK runs like `docker exec`: in the server's namespaces, same user and env.
env -i "${run_env[@]}" nsenter --target "$srv_pid" --mount --pid -- \
  chroot --userspec="$uid:$gid" "$root" "${rt_health[@]}" \
  || { cat "$log" >&2; die "HEALTHCHECK ${rt_health[*]} failed"; }
say "HEALTHCHECK ${rt_health[*]}: exit 0"
code=$(curl -sS -o "$log.body" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/healthz") || true
body=$(cat "$log.body" 2>/dev/null || true); rm -f "$log.body"
[ "$code" = 200 ] || { cat "$log" >&2; die "curl /healthz from outside: HTTP $code $body"; }
say "curl /healthz from outside: 200 $body"
# The playground is in the binary: the image needs no other file for it.
page=$(curl -sS --max-time 5 "http://127.0.0.1:$port/") || die "GET / failed"
grep -q '<title>BatchDiff playground</title>' <<<"$page" || { cat "$log" >&2; die "GET / is not the playground"; }
say "curl / from outside: the playground ($(wc -c <<<"$page") bytes)"
stop_server

# The /data volume, owned by the runtime user: a feed kept in SQLite survives a restart.
rm -f "$root/data/feeds.db" "$root/data/feeds.db-wal" "$root/data/feeds.db-shm"
start_server serve --store sqlite:/data/feeds.db
written=$(curl -sS --max-time 5 -X PUT -H 'Content-Type: application/json' -d '[1,2,3]' "http://127.0.0.1:$port/feeds/docker") \
  || die "PUT to the SQLite store failed"
version=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["version"])' "$written") || die "PUT answered $written"
stop_server
start_server serve --store sqlite:/data/feeds.db
kept=$(curl -sS --max-time 5 "http://127.0.0.1:$port/feeds/docker") || die "GET after the restart failed"
[ "$kept" = "{\"feed\":\"docker\",\"version\":$version,\"data\":[1,2,3]}" ] || { cat "$log" >&2; die "after a restart: $kept"; }
say "--store sqlite:/data/feeds.db kept version $version across a restart"
stop_server
say "server output:"; sed 's/^/    /' "$log"
say "OK"
