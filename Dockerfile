# Builds the earshot binary and runs it on the embedded sled store.
#
# The image listens on 0.0.0.0:7878, which the service allows only with tokens configured (it
# refuses a non-loopback bind with authentication off). So it needs a configuration file with
# `[[tokens]]` at /etc/earshot/earshot.toml; none is baked in. Create one from
# earshot.example.toml with your own secrets and mount it read-only, e.g.
#
#   cp earshot.example.toml earshot.toml    # then replace both tokens (16+ characters each)
#   docker run -p 127.0.0.1:7878:7878 -v earshot-data:/data \
#     -v "$PWD/earshot.toml:/etc/earshot/earshot.toml:ro" earshot
#
# or point EARSHOT_CONFIG at a file provided another way (a Docker or Kubernetes secret):
#   docker run -e EARSHOT_CONFIG=/run/secrets/earshot.toml ... earshot
# The `bind` and `data` of the file are overridden by EARSHOT_BIND and EARSHOT_DATA below.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# The workspace's release profile keeps line tables (`debug = 1`) for benchmarks; the image's
# binary keeps neither debug info nor symbols.
ENV CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols
RUN cargo build --release --locked -p earshot

FROM debian:bookworm-slim
COPY --from=build /src/target/release/earshot /usr/local/bin/earshot
# An unprivileged user owns the data directory (a new named volume takes this ownership). A
# mounted configuration must be readable by uid 10001 (e.g. mode 0644, or 0640 with gid 10001).
RUN groupadd --system --gid 10001 earshot \
    && useradd --system --uid 10001 --gid earshot --no-create-home earshot \
    && mkdir -p /data /etc/earshot && chown earshot:earshot /data
USER earshot
VOLUME ["/data"]
EXPOSE 7878
ENV EARSHOT_BIND=0.0.0.0:7878 \
    EARSHOT_DATA=/data \
    EARSHOT_CONFIG=/etc/earshot/earshot.toml
ENTRYPOINT ["earshot"]
CMD ["serve"]
