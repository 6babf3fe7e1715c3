#!/usr/bin/env bash
# Installs the Debian packages inkwell needs. Usage: scripts/deps.sh [build|test|bench|deb]
#   build: compiler and libraries; test: + PostgreSQL server, python3, clang,
#   chromium, node and npm (the web app's browser tests and the OpenAPI checks; npm
#   only where node lacks it), prometheus (promtool), the Debian packaging tools,
#   pgbouncer and nginx (tests/http/test_pg_bouncer.py and make cluster-test);
#   bench: + wrk, and PostgreSQL (server and psql) for the scale scenario;
#   deb: + the Debian packaging tools (make deb).
#   Only missing packages are installed; nothing happens when all are there.
set -euo pipefail
what=${1:-build}
pkgs=(gcc make pkg-config libmicrohttpd-dev libjansson-dev libsqlite3-dev libpq-dev libicu-dev
      libcurl4-openssl-dev libpng-dev libssl-dev libzstd-dev libbrotli-dev libsodium-dev nettle-dev libcjose-dev
      libzip-dev libcairo2-dev libpango1.0-dev fonts-dejavu-core fonts-noto-cjk fonts-symbola)
# (the fonts are needed at run time too: the PDF export embeds them; fonts-symbola
# draws emoji, monochrome: cairo 1.16 would put a colour emoji font in as 72 dpi bitmaps)
case "$what" in
  test)  pkgs+=(python3 zstd brotli postgresql clang libclang-rt-14-dev valgrind chromium pandoc qpdf poppler-utils
                prometheus debhelper dpkg-dev fakeroot lintian systemd pgbouncer nginx-light)
         command -v node >/dev/null || pkgs+=(nodejs)
         command -v npm >/dev/null || pkgs+=(npm) ;;
  bench) pkgs+=(wrk python3 curl postgresql postgresql-client) ;;
  deb)   pkgs+=(debhelper dpkg-dev fakeroot lintian zlib1g-dev) ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
