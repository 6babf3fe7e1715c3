"""Runs every tests/http/test_*.py module and ends with "http: N passed, N failed"."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
patterns = sys.argv[1:] or ["test_*.py"]
suite = unittest.TestSuite()
for pattern in patterns:
    suite.addTest(unittest.defaultTestLoader.discover(here, pattern=pattern, top_level_dir=here))
if os.environ.get("INKWELL_TEST_BACKEND", "sqlite") != "postgres":
    # test_pg_*: several processes on one PostgreSQL database; they need that backend
    def drop_pg(s):
        keep = unittest.TestSuite()
        for t in s:
            if isinstance(t, unittest.TestSuite):
                keep.addTest(drop_pg(t))
            elif not type(t).__module__.startswith("test_pg_"):
                keep.addTest(t)
        return keep
    suite = drop_pg(suite)
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
passed = max(0, result.testsRun - failed - skipped)
print(f"http {os.environ.get('INKWELL_TEST_BACKEND', 'sqlite')}: {passed} passed, {failed + skipped} failed")
sys.exit(1 if failed or skipped else 0)
