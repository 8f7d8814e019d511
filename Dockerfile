# syntax=docker/dockerfile:1
# capi-topology: a static release binary on a distroless, non-root base.
#   docker build -t capi-topology .
#
# Base images are pinned by digest, so a rebuild uses the bytes that were reviewed. They were
# taken from the images' published references (this project's CI cannot pull images); to move
# them, `docker buildx imagetools inspect rust:1.95-bookworm` (and the distroless tag) and
# replace both the tag and the digest.

FROM rust:1.95-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS build
WORKDIR /src
# Dependencies first, built against placeholder sources, so source edits reuse that layer. The
# patched CEL interpreter (vendor/cel) is a dependency.
COPY Cargo.toml Cargo.lock ./
COPY vendor ./vendor
RUN mkdir -p src benches \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs benches/admission.rs benches/plan.rs \
    && cargo build --release --locked --bin capi-topology \
    && rm -rf src
COPY src ./src
RUN touch src/main.rs src/lib.rs \
    && cargo build --release --locked --bin capi-topology \
    && cp target/release/capi-topology /capi-topology

# glibc (the binary links it; TLS is rustls, so no OpenSSL), CA roots, user 65532, no shell.
FROM gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f
COPY --from=build /capi-topology /capi-topology
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/capi-topology"]
CMD ["serve"]
