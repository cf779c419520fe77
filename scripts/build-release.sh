#!/usr/bin/env bash
# Builds the release binary the same way everywhere (the Dockerfile's build stage and
# scripts/docker-check.sh both call this): a statically linked Swift runtime, so the
# runtime image needs only the C libraries (libmicrohttpd12, libsqlite3-0, libpq5).
# Usage: scripts/build-release.sh OUT_DIR   -> OUT_DIR/batchdiff
set -euo pipefail
out=${1:?usage: $0 OUT_DIR}
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product batchdiff
mkdir -p "$out"
cp .build/release/batchdiff "$out/batchdiff"
echo "build-release: wrote $out/batchdiff"
