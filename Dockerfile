# syntax=docker/dockerfile:1
# capi-topology: a static release binary on a distroless, non-root base.
#   docker build -t capi-topology .

FROM rust:1-bookworm AS build
WORKDIR /src
# Dependencies first, built against placeholder sources, so source edits reuse that layer.
COPY Cargo.toml Cargo.lock ./
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
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /capi-topology /capi-topology
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/capi-topology"]
CMD ["serve"]
