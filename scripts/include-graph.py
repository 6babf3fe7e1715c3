#!/usr/bin/env python3
"""include-graph.py — the folders of src/ and which include which (from the #include
lines), and any circle between folders. Exit status 1 when there is a circle, when a
folder below src/api/ includes src/api/, or when a folder's internal header (a name
ending in _int.h: store/store_int.h, http/req_int.h, api/api_int.h...) is included from
another folder of src/ (the unit tests may include them). Run by tests/run.sh; the
picture is in docs/design.md ("Folders")."""
import glob
import os
import re
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
edges = {}
internal = []  # (file, header): an internal header included from another folder
for f in sorted(glob.glob("src/**/*.[ch]", recursive=True)):
    parts = f.split("/")
    d = parts[1] if len(parts) > 2 else "main"
    for inc, name in re.findall(r'^#include "([a-z_]+)/([^"]+)"', open(f).read(), flags=re.M):
        if inc != d:
            edges.setdefault(d, {}).setdefault(inc, []).append(f)
            if name.endswith("_int.h"):
                internal.append((f, f"{inc}/{name}"))


def path(a, b, seen):
    """A path of folders from a to b, or None."""
    for n in sorted(edges.get(a, {})):
        if n == b:
            return [a, b]
        if n not in seen:
            seen.add(n)
            p = path(n, b, seen)
            if p:
                return [a] + p
    return None


bad = 0
for d in sorted(edges):
    print(f"{d:8} -> {' '.join(sorted(edges[d]))}")
for a in sorted(edges):
    for b in sorted(edges[a]):
        p = path(b, a, set())
        if p:
            print(f"circle: {a} -> {' -> '.join(p)} (e.g. {edges[a][b][0]})")
            bad = 1
for a in sorted(edges):
    if a not in ("main", "api", "cli") and "api" in edges[a]:
        print(f"{a} reaches up into api/: {edges[a]['api'][0]}")
        bad = 1
for f, h in internal:
    print(f"{f} includes {h}, internal to src/{h.split('/')[0]}/")
    bad = 1
print("include graph: no circle between folders, no internal header crossed" if not bad
      else "include graph: FAIL")
sys.exit(bad)
