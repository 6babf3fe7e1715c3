"""The libraries an idle server does not map (issue 38 item 3, docs/benchmarks.md "Idle
memory"): libpq, libcurl, OpenSSL's libcrypto, libzip, cjose, ICU and the PDF export's
cairo, pango and fontconfig are loaded at their first use (src/core/lazylib.h), not at
start. A server that has only answered a list has none of them in /proc/PID/maps; the
first create, PDF and DOCX export load what they need and work."""
import re
import zipfile
import io

from harness import BACKEND, ServerTest

# file names as /proc/PID/maps shows them (the soname's start)
DEFERRED = ["libcurl.so", "libzip.so", "libcjose.so",
            "libicuuc.so", "libicui18n.so", "libcairo.so", "libpango-1.0.so",
            "libpangocairo-1.0.so", "libfontconfig.so", "libglib-2.0.so"]
if BACKEND != "postgres":
    # on PostgreSQL the store loads libpq at start, and libpq its OpenSSL
    DEFERRED += ["libpq.so", "libcrypto.so", "libssl.so"]


class IdleLibraries(ServerTest):
    def mapped(self):
        with open(f"/proc/{self.srv.proc.pid}/maps") as f:
            names = {line.split()[-1].rsplit("/", 1)[-1] for line in f if "/" in line}
        return lambda lib: any(n.startswith(lib) for n in names)

    def test_loaded_at_first_use(self):
        r = self.req("GET", "/api/v1/documents")
        self.assertEqual(r.status, 200, r)
        has = self.mapped()
        self.assertEqual([lib for lib in DEFERRED if has(lib)], [],
                         "mapped by a server that has answered one list")

        # the first create counts its words (ICU); the exports load their libraries
        doc = self.make_doc(prompt="a post about green tea")
        self.assertGreater(doc["words"], 0)
        pdf = self.req("GET", f"/api/v1/documents/{doc['id']}/export?format=pdf")
        self.assertEqual(pdf.status, 200, pdf)
        self.assertTrue(pdf.body.startswith(b"%PDF-"))
        docx = self.req("GET", f"/api/v1/documents/{doc['id']}/export?format=docx")
        self.assertEqual(docx.status, 200, docx)
        self.assertIn("word/document.xml", zipfile.ZipFile(io.BytesIO(docx.body)).namelist())
        has = self.mapped()
        for lib in ("libicuuc.so", "libcairo.so", "libpango-1.0.so", "libzip.so"):
            self.assertTrue(has(lib), f"{lib} not loaded by its first use")
        # and a second export runs on the library loaded once
        again = self.req("GET", f"/api/v1/documents/{doc['id']}/export?format=pdf")
        self.assertEqual(again.status, 200, again)
        self.assertTrue(re.match(rb"%PDF-\d", again.body))
