#!/usr/bin/env bash
# make check: the committed editor bundle (web/vendor/editor.min.js) was built from the
# editor's sources and lock file as they are (its first line names their sha256; `make
# editor-bundle` rebuilds it). No network needed.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(cat editor/package-lock.json editor/build.sh editor/src/*.js | sha256sum | cut -d' ' -f1)
head -n 1 web/vendor/editor.min.js | grep -q "sha256 $want;" || {
  echo "web/vendor/editor.min.js is not built from editor/ as it is: run make editor-bundle" >&2; exit 1; }
grep -q '"lockfileVersion"' editor/package-lock.json
