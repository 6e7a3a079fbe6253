#!/bin/sh
# First start: a cluster whose superuser `stoa` owns database `stoa`. Trust auth: only the compose network reaches
# it (no published port); production uses a managed PostgreSQL with a password from a secret.
set -e
BIN=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  "$BIN/initdb" -D "$PGDATA" -U stoa --auth=trust --encoding=UTF8 >/dev/null
  echo "host all all 0.0.0.0/0 trust" >> "$PGDATA/pg_hba.conf"
  "$BIN/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses= -k /tmp" start >/dev/null
  "$BIN/../bin/psql" -h /tmp -U stoa -d postgres -qc 'CREATE DATABASE stoa' 2>/dev/null || /usr/bin/psql -h /tmp -U stoa -d postgres -qc 'CREATE DATABASE stoa'
  "$BIN/pg_ctl" -D "$PGDATA" -w stop >/dev/null
fi
exec "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' -k /tmp
