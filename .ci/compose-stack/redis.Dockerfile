# Stand-in for redis:7.4-alpine (CI only): Debian 12's redis-server (7.0) and redis-cli, user `redis`, /data its
# working directory and volume, as the official image has them. docker-compose.yml gives the command.
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
VOLUME /data
CMD ["redis-server"]
