# syntax=docker/dockerfile:1
# One image per role:
#   docker build --build-arg ROLE=manager .          (or webhook-server, convctl)
# The build stage compiles only that role with `deno compile` through hack/compile.sh (the role's
# exact permission flags; the webhook server carries its compile Worker). The runtime stage is
# distroless with only that binary, running as nonroot, the binary as its entrypoint.
# `deno compile` downloads its denort runtime from dl.deno.land: the build needs network access
# (docs/installation.md). tests/repo/dockerfile_test.ts checks this file.
ARG DENO_VERSION=2.9.6
ARG ROLE=manager

FROM denoland/deno:${DENO_VERSION} AS build
ARG ROLE
ARG TARGETARCH
WORKDIR /src
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY hack/ hack/
COPY src/ src/
# hack/deno.sh runs tools/node_modules/.bin/deno: here that is the image's (same, pinned) Deno.
RUN mkdir -p tools/node_modules/.bin && ln -s "$(command -v deno)" tools/node_modules/.bin/deno
RUN case "${TARGETARCH:-amd64}" in \
      amd64) target=x86_64-unknown-linux-gnu ;; \
      arm64) target=aarch64-unknown-linux-gnu ;; \
      *) echo "unsupported TARGETARCH ${TARGETARCH}" >&2; exit 1 ;; \
    esac \
    && DCO_COMPILE_OUT=/out DCO_COMPILE_TARGET="$target" bash hack/compile.sh "${ROLE}"

FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
USER nonroot
LABEL org.opencontainers.image.source="https://github.com/terasky-oss/declarative-conversion-operator"

FROM runtime AS manager
COPY --from=build /out/manager /manager
ENTRYPOINT ["/manager"]

FROM runtime AS webhook-server
COPY --from=build /out/webhook-server /webhook-server
ENTRYPOINT ["/webhook-server"]

FROM runtime AS convctl
COPY --from=build /out/convctl /convctl
ENTRYPOINT ["/convctl"]

# The image is the stage named by ROLE (BuildKit builds only the stages it needs).
FROM ${ROLE}
USER nonroot
