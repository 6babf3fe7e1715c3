#!/usr/bin/env python3
"""secrets_check.py LOGDIR — no secret a test used reaches a server log (issue 34; API.md:
secrets never reach a log).

The HTTP harness (tests/http/harness.py, record_secret) and the browser tests' library
(tests/web/lib.mjs, recordSecret: the command line's keys, the API calls, and every request
and answer of each page — typed passwords, session cookies, a webhook's secret shown
once) append every secret a test sent or was given — API keys, passwords, session ids, webhook and client secrets — to
LOGDIR/secrets-*.txt. When the suites have ended, tests/run.sh runs this script: it reads
every server log the run wrote in LOGDIR (server-*.log of the HTTP suites, web-server-*.log
of the browser suites) and fails, naming the log, the line and the kind of secret (never
the secret itself), when any holds one of them. Exit 0: none found; 1: found; 2: nothing
to check (no secrets recorded or no logs), which tests/run.sh reports as a failure too.
"""
import glob
import hashlib
import os
import sys

LOGS = ("server-*.log", "web-server-*.log")


def kind(secret):
    if secret.startswith("whsec_"):
        return "a webhook secret"
    if secret.startswith("ink_"):
        return "an API key"
    return "a password, session id or client secret"


def check(logdir, out=sys.stdout):
    secrets = set()
    for path in glob.glob(os.path.join(logdir, "secrets-*.txt")):
        with open(path, encoding="utf-8", errors="replace") as f:
            secrets.update(line.rstrip("\n") for line in f if len(line.rstrip("\n")) >= 12)
    logs = sorted(p for pat in LOGS for p in glob.glob(os.path.join(logdir, pat)))
    if not secrets or not logs:
        print(f"secrets check: nothing to check in {logdir} ({len(secrets)} secrets, "
              f"{len(logs)} logs)", file=out)
        return 2
    found = 0
    for path in logs:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if not any(s in text for s in secrets):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for s in secrets:
                if s in line:
                    found += 1
                    tag = hashlib.sha256(s.encode()).hexdigest()[:8]
                    print(f"secrets check: {kind(s)} (sha256 {tag}…) in {path}:{n}", file=out)
    print(f"secrets check: {len(secrets)} secrets, {len(logs)} server logs, {found} found",
          file=out)
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(check(sys.argv[1]))
