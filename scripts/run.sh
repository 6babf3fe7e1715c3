#!/usr/bin/env bash
# `make run`: serve on the embedded defaults (SQLite + builtin generator) at
# 127.0.0.1:8080 with a demo key. The key is kept in <data-dir>/demo-key (mode 0600)
# so that it can be shown again on the next start; only its hash is in the database.
# The web app's address carries the key in its fragment (#key=...): a browser never
# sends a fragment to the server nor in a Referer, and the app reads it once, keeps it
# in the tab's session storage and removes it from the address bar.
set -euo pipefail
bin=${BUILD:-build}/inkwell
data=${INKWELL_DATA_DIR:-./inkwell-data}
mkdir -p "$data"
if [ ! -s "$data/demo-key" ]; then
  (umask 077 && "$bin" key create --user demo --data-dir "$data" > "$data/demo-key.tmp")
  mv "$data/demo-key.tmp" "$data/demo-key"
fi
key=$(cat "$data/demo-key")
listen=${INKWELL_LISTEN:-127.0.0.1:8080}
cat <<MSG
inkwell: serving on http://$listen (SQLite in $data, builtin generator)
inkwell: demo key: $key
inkwell: web app, signed in as demo: open http://$listen/#key=$key
  try: curl -s -H "Authorization: Bearer $key" -d name=Hello -d "prompt=a blog post about tea" \\
            http://$listen/api/v1/documents
MSG
exec "$bin" serve --data-dir "$data" --listen "$listen" "$@"
