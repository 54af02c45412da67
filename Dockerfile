# distenv-webhook container image.
#   build:  scripts/image-build.sh   (buildah bud --isolation chroot, no Docker engine)
#   or:     docker build -t distenv:$(cat VERSION) .
# The runtime stage holds only the shared libraries the binary links against and
# runs as a non-root numeric user; the binary is the entrypoint.

FROM debian:bookworm-slim AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc libc6-dev make pkg-config \
      libmicrohttpd-dev libgnutls28-dev libcjson-dev libyaml-dev \
      libcurl4-openssl-dev libssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what `make` reads (see .dockerignore): a change elsewhere keeps the cache.
COPY Makefile VERSION ./
COPY src/ src/
ARG GIT_REV=unknown
RUN make -j"$(nproc)" GIT_REV="$GIT_REV" \
 && make install GIT_REV="$GIT_REV" PREFIX=/usr/local DESTDIR=/out \
 && /out/usr/local/bin/distenv-webhook version

FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12 libgnutls30 libcjson1 libyaml-0-2 libcurl4 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
# Metadata first and the binary last: a source change rebuilds only the COPY layer.
ARG VERSION=0.0.0
LABEL org.opencontainers.image.title="distenv-webhook" \
      org.opencontainers.image.description="Kubernetes admission webhook that injects distributed-training env into the pods of StatefulSets, Indexed Jobs, JobSets and LeaderWorkerSets" \
      org.opencontainers.image.version="$VERSION"
EXPOSE 8443
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/distenv-webhook"]
CMD ["serve", "--config", "/etc/distenv/config.yaml"]
COPY --from=build /out/usr/local/bin/distenv-webhook /usr/local/bin/distenv-webhook
