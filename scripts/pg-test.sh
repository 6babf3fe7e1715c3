#!/usr/bin/env bash
# pg-test.sh — a throwaway PostgreSQL cluster for the tests, kept entirely inside DIR.
#
#   scripts/pg-test.sh start DIR    initdb + start; prints the one line
#                                   postgres://inkwell@127.0.0.1:PORT/postgres
#   scripts/pg-test.sh stop DIR     fast shutdown, then removes DIR
#   scripts/pg-test.sh restart DIR  fast shutdown and start again on the same port (outage tests);
#                                   PG_TEST_PAUSE=SECONDS waits that long while it is down
#
# The server runs as an unprivileged user (the Debian `postgres` user when run as root),
# listens on 127.0.0.1 only (a free port), keeps its unix socket in DIR/sock, trusts
# loopback connections only, and runs with fsync off. The system cluster is never touched.
# Layout of DIR: data/ (PGDATA), sock/, postgres.log, pg-test.port (also our marker).
set -euo pipefail

die() {
    echo "pg-test: $*" >&2
    exit 1
}

usage() {
    die "usage: $0 start|stop|restart DIR"
}

# The newest installed server, e.g. /usr/lib/postgresql/15/bin.
find_bindir() {
    local best="" v d
    for d in /usr/lib/postgresql/*/bin; do
        if [ ! -x "$d/initdb" ] || [ ! -x "$d/pg_ctl" ]; then
            continue
        fi
        v=${d#/usr/lib/postgresql/}
        v=${v%/bin}
        if [ -z "$best" ] ||
            [ "$(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -n1)" = "$v" ]; then
            best=$v
        fi
    done
    [ -n "$best" ] || die "no PostgreSQL server found under /usr/lib/postgresql/*/bin" \
        "(install the Debian package 'postgresql')"
    echo "/usr/lib/postgresql/$best/bin"
}

# Runs a command as the cluster's owner, from inside DIR.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        if command -v runuser >/dev/null 2>&1; then
            (cd "$DIR" && runuser -u postgres -- "$@")
        else
            (cd "$DIR" && setpriv --reuid=postgres --regid=postgres --init-groups -- "$@")
        fi
    else
        (cd "$DIR" && "$@")
    fi
}

# True when something accepts connections on 127.0.0.1:$1.
port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
    local _ p
    for _ in $(seq 1 200); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        port_busy "$p" || { echo "$p"; return 0; }
    done
    die "no free port found on 127.0.0.1"
}

wait_ready() {
    local port=$1 _
    for _ in $(seq 1 300); do
        if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U inkwell -d postgres >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    tail -n 20 "$DIR/postgres.log" >&2 || true
    die "server on port $port did not become ready"
}

server_running() {
    as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1
}

# Starts the server with the port already written in its configuration.
server_start() {
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 60 start >&2
}

server_stop() {
    if server_running; then
        as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 60 stop >&2
    fi
}

print_url() {
    echo "postgres://inkwell@127.0.0.1:$1/postgres"
}

# Refuses anything that is not a cluster this script made.
check_ours() {
    if [ ! -f "$DIR/pg-test.port" ] || [ ! -f "$DIR/data/PG_VERSION" ]; then
        die "$DIR is not a cluster made by pg-test.sh (no pg-test.port / data/PG_VERSION)"
    fi
}

# pg_hba.conf and the included data/pg-test.conf (rewritten for each port tried).
write_config() {
    local port=$1
    cat >"$DIR/data/pg_hba.conf" <<EOF
# pg-test.sh: trust for the private socket and loopback only
local all all trust
host  all all 127.0.0.1/32 trust
EOF
    if ! grep -q "^include = 'pg-test.conf'" "$DIR/data/postgresql.conf"; then
        printf "\n# --- pg-test.sh ---\ninclude = 'pg-test.conf'\n" >>"$DIR/data/postgresql.conf"
    fi
    cat >"$DIR/data/pg-test.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$DIR/sock'
unix_socket_permissions = 0700
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 64MB
EOF
}

cmd_start() {
    if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
        die "$DIR exists and is not empty (use restart for a running cluster, stop to remove it)"
    fi
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd -P)
    case "$DIR" in *\'* | *\\*) die "DIR must not contain quotes or backslashes" ;; esac
    [ ${#DIR} -le 80 ] || die "DIR is too long for a unix socket path (max 80 characters): $DIR"
    chmod 700 "$DIR"
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' user" \
            "(install the Debian package 'postgresql')"
        chown postgres:postgres "$DIR"
        as_owner test -w "$DIR/." 2>/dev/null ||
            die "user postgres cannot reach $DIR (a parent directory is not searchable);" \
                "pick a DIR under /tmp"
    fi
    as_owner mkdir -m 700 "$DIR/sock"
    as_owner "$BIN/initdb" -D "$DIR/data" -U inkwell --auth=trust --encoding=UTF8 --locale=C \
        --no-sync >"$DIR/initdb.log" 2>&1 || {
        cat "$DIR/initdb.log" >&2
        die "initdb failed"
    }
    local port tries
    for tries in 1 2 3 4 5 6 7 8; do
        port=$(pick_port)
        echo "$port" >"$DIR/pg-test.port"
        write_config "$port"
        if server_start; then
            wait_ready "$port"
            print_url "$port"
            return 0
        fi
        # Lost a race for the port (or another failure): show why and try another port.
        tail -n 5 "$DIR/postgres.log" >&2 || true
        echo "pg-test: start on port $port failed (attempt $tries), retrying" >&2
    done
    die "could not start the server (see $DIR/postgres.log)"
}

cmd_stop() {
    [ -d "$DIR" ] || die "$DIR does not exist"
    DIR=$(cd "$DIR" && pwd -P)
    check_ours
    server_stop
    rm -rf -- "$DIR"
}

cmd_restart() {
    [ -d "$DIR" ] || die "$DIR does not exist"
    DIR=$(cd "$DIR" && pwd -P)
    check_ours
    local port
    port=$(cat "$DIR/pg-test.port")
    server_stop
    if [ -n "${PG_TEST_PAUSE:-}" ]; then
        sleep "$PG_TEST_PAUSE"
    fi
    server_start || die "restart on port $port failed (see $DIR/postgres.log)"
    wait_ready "$port"
    print_url "$port"
}

[ $# -eq 2 ] || usage
action=$1
DIR=$2
[ -n "$DIR" ] || usage
# Settings from the caller's environment must not redirect the tools elsewhere.
unset PGDATA PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGSERVICE PGOPTIONS
BIN=$(find_bindir)

case "$action" in
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_restart ;;
*) usage ;;
esac
