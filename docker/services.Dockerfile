# PostgreSQL and Redis for the compose files, from Debian packages on the Stoa runtime base (no image registry).
#   DOCKER_BUILDKIT=0 docker build -f docker/services.Dockerfile --target postgres -t stoa-postgres .
FROM stoa-base-runtime AS postgres
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /var/lib/postgresql/data && chown postgres:postgres /var/lib/postgresql/data
COPY docker/postgres-entrypoint.sh /usr/local/bin/
USER postgres
ENV PGDATA=/var/lib/postgresql/data
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
HEALTHCHECK --interval=5s --timeout=3s --retries=10 CMD ["/usr/lib/postgresql/15/bin/pg_isready", "-h", "127.0.0.1", "-q"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/postgres-entrypoint.sh"]

FROM stoa-base-runtime AS redis
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
USER redis
EXPOSE 6379
HEALTHCHECK --interval=5s --timeout=3s --retries=10 CMD ["redis-cli", "ping"]
ENTRYPOINT ["/usr/bin/tini", "--", "redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
