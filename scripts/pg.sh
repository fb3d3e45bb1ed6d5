#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `pg.sh start DIR` makes one in DIR
# (installing the server from Debian's packages when it is missing), starts it on
# a free loopback port and prints its URL; `pg.sh stop DIR` stops it and removes DIR.
# initdb and postgres refuse to run as root: as root, the cluster belongs to the
# `postgres` OS user (made when missing).
set -euo pipefail
cmd="${1:?usage: pg.sh start|stop DIR}"
dir="${2:?usage: pg.sh start|stop DIR}"

find_bin() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then echo "$found"; return 0; fi
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
start)
  if ! bin="$(find_bin)"; then
    echo "pg.sh: installing PostgreSQL from the system's packages" >&2
    if [ "$(id -u)" = 0 ]; then sudo_=""; else sudo_="sudo"; fi
    $sudo_ apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq postgresql postgresql-contrib >&2
    bin="$(find_bin)"
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    # The caller's fresh temp folder (mktemp makes it 0700) must let the postgres user through.
    chmod o+x "$(dirname "$dir")"
    chown postgres "$dir"
  fi
  chmod 700 "$dir"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  pwfile="$dir/.pw"
  as_owner sh -c "umask 077; printf sidecar > '$pwfile'"
  as_owner "$bin/initdb" -D "$dir/data" -U sidecar --pwfile="$pwfile" -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  # Small and quick: a test cluster, fsync kept on (the fault tests restart it with -m immediate).
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=64MB" \
    start >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bin/psql" -h "$dir" -p "$port" -U sidecar -d postgres -qAt \
    -c "CREATE DATABASE sidecar" >&2
  echo "$bin" > "$dir/bin"
  echo "$port" > "$dir/port"
  echo "postgresql://sidecar:sidecar@127.0.0.1:$port/sidecar"
  ;;
stop)
  # Only a folder `start` made is removed (it holds the password file first of all): a wrong
  # argument, such as a device or someone's folder, is refused and left as it is.
  if [ ! -d "$dir" ] || [ -L "$dir" ] || [ ! -e "$dir/.pw" ]; then
    if [ -e "$dir" ] || [ -L "$dir" ]; then
      echo "pg.sh: $dir is not a cluster folder pg.sh start made; left as it is" >&2; exit 2
    fi
    exit 0  # already gone
  fi
  if [ -f "$dir/bin" ] && [ -d "$dir/data" ]; then
    as_owner "$(cat "$dir/bin")/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: pg.sh start|stop DIR" >&2; exit 2 ;;
esac
