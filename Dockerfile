# Builds the earshot binary and runs it on the embedded sled store.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p earshot

FROM debian:bookworm-slim
COPY --from=build /src/target/release/earshot /usr/local/bin/earshot
VOLUME ["/data"]
EXPOSE 7878
ENTRYPOINT ["earshot"]
CMD ["serve", "--bind", "127.0.0.1:7878", "--data", "/data"]
