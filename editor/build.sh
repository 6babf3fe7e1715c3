#!/usr/bin/env bash
# Builds web/vendor/editor.min.js from src/ with the pinned packages (npm ci), and puts on
# its first line the sha256 of the sources and the lock file, which `make check`
# (scripts/check-editor-bundle.sh) compares without the network. Run by `make editor-bundle`.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error >&2
# The page's CSP (style-src 'self') refuses <style> elements: style-mod (CodeMirror's CSS
# injector) is made to use a constructed stylesheet (adoptedStyleSheets) on the document
# too, as it already does in a shadow root. One line, checked.
sm=node_modules/style-mod/src/style-mod.js
sed -i 's/if (!root.head && root.adoptedStyleSheets && win.CSSStyleSheet)/if (root.adoptedStyleSheets \&\& win.CSSStyleSheet)/' "$sm"
grep -q 'if (root.adoptedStyleSheets && win.CSSStyleSheet)' "$sm" || { echo "style-mod: the CSP patch did not apply" >&2; exit 1; }
sum=$(cat package-lock.json build.sh src/*.js | sha256sum | cut -d' ' -f1)
out=../web/vendor/editor.min.js
./node_modules/.bin/esbuild src/editor.js --bundle --minify --format=esm --target=es2020 \
  --legal-comments=none --charset=utf8 --outfile="$out.tmp" --log-level=warning
{ echo "/* inkwell editor bundle: CodeMirror 6 (MIT, see LICENSE-codemirror.txt); source editor/, sha256 $sum; make editor-bundle */"; cat "$out.tmp"; } > "$out"
rm -f "$out.tmp"
