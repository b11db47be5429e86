# Stand-in for prom/prometheus:v2.55.1 (CI only): Debian 12's prometheus (2.42) with the official image's
# entrypoint, user, data volume and default flags, plus wget for docker-compose.yml's health check.
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus wget >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /prometheus /etc/prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
VOLUME /prometheus
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
