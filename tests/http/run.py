"""Runs the tests/http/test_*.py modules and ends with "http BACKEND: N passed, N failed".

With INKWELL_TEST_CLAIMS=DIR, several runs of this script share the modules of one
backend: each module is run by the first run to claim it (an atomic mkdir of
DIR/MODULE), so two workers of tests/run.sh split a backend's suite between them, each
taking the next unclaimed module when it is free (the slow modules first, SLOW_FIRST).
Each run prints how long each of its modules took.
"""
import os
import sys
import time
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
backend = os.environ.get("INKWELL_TEST_BACKEND", "sqlite")
patterns = sys.argv[1:] or ["test_*.py"]
claims = os.environ.get("INKWELL_TEST_CLAIMS", "")

# The modules that take longest (measured: docs/testing.md), taken first so that no
# worker starts one of them when the other is about to end.
SLOW_FIRST = ["test_pg_bouncer", "test_pg_multi", "test_pg_drain", "test_pg_events", "test_pg_webhooks",
              "test_webhooks", "test_hostile", "test_stream", "test_diskfull", "test_jobs",
              "test_leases", "test_s3", "test_limits"]


def modules_of(s, out):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            modules_of(t, out)
        else:
            out.setdefault(type(t).__module__, []).append(t)
    return out


found = {}
for pattern in patterns:
    modules_of(unittest.defaultTestLoader.discover(here, pattern=pattern, top_level_dir=here), found)
for name in list(found):
    # a module that failed to import is a _FailedTest whose module is unittest.loader
    if backend != "postgres" and name.startswith("test_pg_"):
        # test_pg_*: several processes on one PostgreSQL database; they need that backend
        del found[name]
order = sorted(found, key=lambda n: (SLOW_FIRST.index(n) if n in SLOW_FIRST else len(SLOW_FIRST), n))

runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout)
testsrun = failed = skipped = 0
times = []
for name in order:
    if claims:
        try:
            os.mkdir(os.path.join(claims, name))
        except FileExistsError:
            continue
    t0 = time.monotonic()
    result = runner.run(unittest.TestSuite(found[name]))
    times.append((name, time.monotonic() - t0))
    testsrun += result.testsRun
    failed += len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped += len(result.skipped)
    sys.stdout.flush()
print("module times: " + ", ".join(f"{n} {s:.0f}s" for n, s in sorted(times, key=lambda x: -x[1])))
passed = max(0, testsrun - failed - skipped)
print(f"http {backend}: {passed} passed, {failed + skipped} failed")
sys.exit(1 if failed or skipped else 0)
