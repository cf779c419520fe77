#!/usr/bin/env bash
# The Python tools of the tests, pinned, in a venv at .build/venv (created on first use):
# openapi-spec-validator and schemathesis for scripts/api-check.sh, jsonpatch (an RFC 6902
# implementation the JSON Patch tests apply answers with). Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/venv
pins=(openapi-spec-validator==0.9.0 schemathesis==4.32.5 jsonpatch==1.33)

if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    echo "test-venv: installing python3-venv" >&2
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  rm -rf "$venv"; python3 -m venv "$venv"
fi
want=$(printf '%s\n' "${pins[@]}" | sort)
have=$("$venv/bin/pip" freeze 2>/dev/null | grep -iE '^(openapi-spec-validator|schemathesis|jsonpatch)==' | sort -f || true)
if [ "${want,,}" != "${have,,}" ]; then
  echo "test-venv: installing ${pins[*]} into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
fi
echo "$PWD/$venv/bin/python"
