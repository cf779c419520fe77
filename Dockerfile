# syntax=docker/dockerfile:1
# BatchDiff: build with the official Swift image, run on debian:bookworm-slim.
# scripts/docker-check.sh checks the runtime stage without a Docker engine and parses this
# file (runtime stage: FROM, RUN, COPY --from=build, USER, ENV, HEALTHCHECK, ENTRYPOINT,
# CMD), so keep those instructions in the simple forms used here.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libpq-dev zlib1g-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN scripts/build-release.sh /out

FROM debian:bookworm-slim AS runtime
# The Swift runtime is linked statically (scripts/build-release.sh); libmicrohttpd12,
# libsqlite3-0, libpq5 and zlib1g are the libraries the binary needs (zlib1g is in
# bookworm-slim already; named so that it stays; docker-check runs ldd).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libpq5 zlib1g \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --uid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin batchdiff \
 && mkdir -p /data && chown batchdiff:batchdiff /data
COPY --from=build /out/batchdiff /usr/local/bin/batchdiff
# Feeds kept with --store sqlite:/data/feeds.db survive the container (docker-check proves it).
VOLUME /data
USER batchdiff
ENV BATCHDIFF_HOST=0.0.0.0 BATCHDIFF_PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 CMD ["/usr/local/bin/batchdiff", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/batchdiff"]
CMD ["serve"]
