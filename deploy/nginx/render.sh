#!/bin/sh
# Renders one of this folder's templates into nginx configuration, on standard output: the
# part that goes inside nginx's http block (nginx.conf here includes it). Only the variables
# below are replaced; nginx's own ($uri, $http_accept...) stay as they are, which a plain
# `envsubst` would blank out.
#
#   BATCHDIFF_REPLICAS='10.0.0.1:8080 10.0.0.2:8080' NGINX_PORT=8080 \
#   NGINX_CACHE_DIR=/var/cache/nginx/batchdiff NGINX_ACCESS_LOG=/var/log/nginx/batchdiff.log \
#   BATCHDIFF_PUBLIC_FEEDS='leaderboard,scores-*' \
#     deploy/nginx/render.sh deploy/nginx/batchdiff-cache.conf.template > /etc/nginx/batchdiff.conf
#
# BATCHDIFF_REPLICAS: the servers' host:port, any number, separated by spaces or commas.
# NGINX_PORT: what nginx listens on ("8080", or "127.0.0.1:8080").
# NGINX_ACCESS_LOG: the access log's file (its format leaves the query, and so any
#   access_token, out).
# NGINX_CACHE_DIR: the cache's folder (the cache template only).
# BATCHDIFF_PUBLIC_FEEDS: the same patterns as the servers' --public-feeds (comma-separated
#   ids, or prefixes ending in *; `true` is every feed; the cache template only): requests
#   for those feeds share the cache whatever token they carry; others with a token pass by.
set -eu

die() { printf 'render.sh: %s\n' "$*" >&2; exit 64; }
[ $# -eq 1 ] && [ -r "$1" ] || die "usage: render.sh TEMPLATE (a readable file of deploy/nginx)"
: "${BATCHDIFF_REPLICAS:?render.sh: set BATCHDIFF_REPLICAS (host:port of each server)}"
: "${NGINX_PORT:?render.sh: set NGINX_PORT}"
: "${NGINX_ACCESS_LOG:?render.sh: set NGINX_ACCESS_LOG}"
NGINX_CACHE_DIR=${NGINX_CACHE_DIR:-}
if grep -q 'NGINX_CACHE_DIR' "$1" && [ -z "$NGINX_CACHE_DIR" ]; then die "set NGINX_CACHE_DIR (this template caches)"; fi

# One `server` line per replica.
BATCHDIFF_UPSTREAM_SERVERS=
for replica in $(printf '%s' "$BATCHDIFF_REPLICAS" | tr ',' ' '); do
    case "$replica" in *[!A-Za-z0-9.:_\[\]-]*) die "not a host:port: $replica" ;; esac
    BATCHDIFF_UPSTREAM_SERVERS="$BATCHDIFF_UPSTREAM_SERVERS    server $replica;
"
done
[ -n "$BATCHDIFF_UPSTREAM_SERVERS" ] || die "BATCHDIFF_REPLICAS names no server"

# The public feeds as one regular expression of the path (`/feeds/<id>` and its changes), as
# the server matches them: byte for byte, an id's characters being A-Z a-z 0-9 . _ -.
patterns=${BATCHDIFF_PUBLIC_FEEDS:-}
case "$patterns" in true | 1) patterns='*' ;; false | 0) patterns= ;; esac
BATCHDIFF_PUBLIC_FEEDS_MAP=
if [ -n "$patterns" ]; then
    alternatives=
    for pattern in $(printf '%s' "$patterns" | tr ',' ' '); do
        prefix=${pattern%\*}
        case "$prefix" in '' | *[!A-Za-z0-9._-]*) [ -z "$prefix" ] && [ "$pattern" = '*' ] || die "not a feed-id pattern: $pattern" ;; esac
        regex=$(printf '%s' "$prefix" | sed 's/\./\\./g')
        [ "$prefix" = "$pattern" ] || regex="$regex[^/]*"
        alternatives="$alternatives${alternatives:+|}$regex"
    done
    BATCHDIFF_PUBLIC_FEEDS_MAP="    \"~^/feeds/($alternatives)(/changes)?\$\" 1;"
fi

export NGINX_PORT NGINX_ACCESS_LOG NGINX_CACHE_DIR BATCHDIFF_UPSTREAM_SERVERS BATCHDIFF_PUBLIC_FEEDS_MAP
exec envsubst '${NGINX_PORT} ${NGINX_ACCESS_LOG} ${NGINX_CACHE_DIR} ${BATCHDIFF_UPSTREAM_SERVERS} ${BATCHDIFF_PUBLIC_FEEDS_MAP}' < "$1"
