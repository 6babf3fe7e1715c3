#!/usr/bin/env bash
# test_deb.sh — the Debian package, end to end (a CI step; needs root or sudo):
# builds it (make deb), lintian shows no errors, systemd-analyze verify accepts the
# unit, apt-get installs it, the installed binary runs as the unit would (user
# inkwell, the packaged config, a temporary port) and answers, then apt-get purge
# removes it and nothing is left. Ends with "pkg: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
apt() { $sudo flock /tmp/apt.lock env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
work=$(mktemp -d /tmp/inkwell-pkg.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && $sudo kill "$pid" 2>/dev/null
  if dpkg-query -W -f='${Status}' inkwell 2>/dev/null | grep -q installed; then apt purge -y -qq inkwell >/dev/null 2>&1; fi
  rm -rf "$work"
}
trap cleanup EXIT

if ! make deb >"$work/build.log" 2>&1; then
  fail "make deb"; tail -n 40 "$work/build.log"
  echo "pkg: $passed passed, $((failed)) failed"; exit 1
fi
ok "make deb"
deb=$(ls build/deb/inkwell_*.deb | head -n 1)
version=$(sed -n 's/.*INKWELL_VERSION "\(.*\)"/\1/p' src/core/version.h)
check "package version is the binary's ($version)" test "$(dpkg-deb -f "$deb" Version)" = "$version"
check "depends on the fonts the PDF export needs" sh -c "dpkg-deb -f '$deb' Depends | grep -q fonts-dejavu-core && dpkg-deb -f '$deb' Depends | grep -q fonts-noto-cjk"
lintian --fail-on error "$deb" >"$work/lintian.log" 2>&1
check "lintian: no errors" test $? -eq 0
grep -E '^E:' "$work/lintian.log" | head -n 20

if dpkg-query -W -f='${Status}' inkwell 2>/dev/null | grep -q installed; then
  fail "inkwell is already installed here; not touching it"; echo "pkg: $passed passed, $failed failed"; exit 1
fi
apt install -y -qq "./$deb" >"$work/install.log" 2>&1
check "apt-get install ./$(basename "$deb")" test $? -eq 0
check "binary installed" test -x /usr/bin/inkwell
# a release build: no test control (core/testhooks.h) is compiled in, so none is named
check "no test controls in the binary" sh -c "! grep -a -q INKWELL_TEST_ /usr/bin/inkwell"
check "man page installed" test -f /usr/share/man/man1/inkwell.1.gz
check "unit installed" test -f /lib/systemd/system/inkwell.service
check "config is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' inkwell | grep -q /etc/inkwell/inkwell.conf"
check "config readable by root and the inkwell group only" test "$(stat -c '%U:%G %a' /etc/inkwell/inkwell.conf)" = "root:inkwell 640"
check "user inkwell exists, no login" sh -c "getent passwd inkwell | grep -q ':/var/lib/inkwell:/usr/sbin/nologin$'"
check "data directory owned by inkwell" test "$(stat -c '%U %a' /var/lib/inkwell)" = "inkwell 750"
systemd-analyze verify /lib/systemd/system/inkwell.service >"$work/verify.log" 2>&1
check "systemd-analyze verify accepts the unit" test $? -eq 0
cat "$work/verify.log"
for opt in ProtectSystem=strict NoNewPrivileges=yes StateDirectory=inkwell PrivateTmp=yes ProtectHome=yes User=inkwell; do
  check "unit has $opt" grep -qx "$opt" /lib/systemd/system/inkwell.service
done

# Run it as the unit would: its user, its config, its working directory (a free port).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( cd /var/lib/inkwell && exec $sudo setpriv --reuid=inkwell --regid=inkwell --init-groups --no-new-privs \
    /usr/bin/inkwell serve --config /etc/inkwell/inkwell.conf --listen "127.0.0.1:$port" ) >"$work/server.log" 2>&1 &
pid=$!
up=0
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && { up=1; break; }
  sleep 0.1
done
check "installed server answers /healthz" test $up -eq 1
check "/readyz: ready on SQLite in /var/lib/inkwell" sh -c "curl -fs http://127.0.0.1:$port/readyz | grep -q '\"message\":\"ready\",\"storage\":\"sqlite\"'"
key=$($sudo setpriv --reuid=inkwell --regid=inkwell --init-groups /usr/bin/inkwell key create --user pkgtest --config /etc/inkwell/inkwell.conf 2>>"$work/server.log")
check "key create as the service user" sh -c "echo '$key' | grep -q '^ink_'"
code=$(curl -s -o "$work/doc.json" -w '%{http_code}' -H "Authorization: Bearer $key" -d name=Pkg -d prompt=tea "http://127.0.0.1:$port/api/v1/documents")
check "create a document (201)" test "$code" = 201
check "/metrics counted it" sh -c "curl -fs http://127.0.0.1:$port/metrics | grep -q 'inkwell_http_requests_total{route=\"/api/v1/documents\",method=\"POST\",status=\"2xx\"} 1'"
check "/api/v1/openapi.json served" sh -c "curl -fs http://127.0.0.1:$port/api/v1/openapi.json | grep -q '\"openapi\": \"3.1'"
check "database written by the service user" test "$(stat -c %U /var/lib/inkwell/inkwell.db)" = inkwell
$sudo kill -TERM "$pid"; wait "$pid" 2>/dev/null; rc=$?; pid=""
check "SIGTERM stops it cleanly (exit 0)" test $rc -eq 0

apt remove -y -qq inkwell >"$work/remove.log" 2>&1
check "apt-get remove" test $? -eq 0
check "remove keeps the config" test -f /etc/inkwell/inkwell.conf
check "remove takes the binary" test ! -e /usr/bin/inkwell
apt purge -y -qq inkwell >"$work/purge.log" 2>&1
check "apt-get purge" test $? -eq 0
check "nothing left: package" sh -c "! dpkg-query -W -f='\${Status}' inkwell 2>/dev/null | grep -q installed"
for p in /usr/bin/inkwell /etc/inkwell /var/lib/inkwell /lib/systemd/system/inkwell.service /usr/share/man/man1/inkwell.1.gz /usr/share/doc/inkwell; do
  check "nothing left: $p" test ! -e "$p"
done
check "nothing left: user and group" sh -c "! getent passwd inkwell && ! getent group inkwell"

echo "pkg: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
