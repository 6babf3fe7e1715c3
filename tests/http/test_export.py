"""Black-box tests of GET /documents/{id}/export (API.md §12): every format's headers
and bytes, checked where possible by third-party readers (pandoc, python's zipfile,
qpdf, pdftotext, pdffonts); errors 422/409/404/401/405; awkward file names."""
import email.message
import html.parser
import io
import json
import os
import re
import subprocess
import tempfile
import urllib.parse
import zipfile

from harness import SLOW, ServerTest

NOTFOUND = {"message": "Resource not found.", "status": 404}
CTYPES = {
    "md": "text/markdown; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pdf": "application/pdf",
}
RESULT = (
    "An introduction with **bold** and *italic* words.\n\n"
    "## First steps\n\n"
    "1. Boil the water\n"
    "2. Warm the pot\n\n"
    "## Scripts\n\n"
    "- Русский: чай с лимоном\n"
    "- 中文：绿茶和红茶\n"
    "- Ελληνικά: τσάι\n"
    "  - nested leaf\n\n"
    "A closing paragraph.\n"
)


def run(*cmd, data=None):
    return subprocess.run(cmd, input=data, capture_output=True, timeout=60)


def disposition_names(value):
    """(filename, filename* decoded by the standard library's RFC 2231/5987 reader,
    filename* percent-decoded as strict UTF-8) of a Content-Disposition."""
    m = re.fullmatch(r'attachment; filename="([^"\\]*)"; filename\*=UTF-8\'\'([^;\s]+)', value)
    assert m, value
    assert re.fullmatch(r"[A-Za-z0-9!#$&+\-.^_`|~%]+", m.group(2)), value  # RFC 5987 value-chars
    msg = email.message.EmailMessage()
    msg["Content-Disposition"] = "attachment; filename*=UTF-8''" + m.group(2)
    return m.group(1), msg.get_filename(), urllib.parse.unquote(m.group(2), errors="strict")


class Export(ServerTest):
    def doc(self, name="Tea guide", result=RESULT, key="alice"):
        d = self.make_doc(key=key, name=name)
        r = self.req("PUT", f"/api/v1/documents/{d['id']}", key=key, form={"result": result})
        self.assertEqual(r.status, 200, r)
        return d["id"]

    def export(self, doc_id, fmt=None, method="GET", key="alice"):
        q = "" if fmt is None else "?format=" + fmt
        return self.req(method, f"/api/v1/documents/{doc_id}/export{q}", key=key)

    def test_markdown_is_default_and_exact(self):
        i = self.doc()
        for fmt in (None, "md", ""):
            r = self.export(i, fmt)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.header("Content-Type"), CTYPES["md"])
            self.assertEqual(r.body, ("# Tea guide\n\n" + RESULT).encode())
            self.assertEqual(r.header("Content-Disposition"),
                             "attachment; filename=\"Tea guide.md\"; filename*=UTF-8''Tea%20guide.md")
            self.assertIsNotNone(r.header("X-RateLimit-Remaining"))

    def test_text_exact(self):
        i = self.doc(result="line one\r\n\tline *two*\n")
        r = self.export(i, "txt")
        self.assertEqual((r.status, r.header("Content-Type")), (200, CTYPES["txt"]))
        self.assertEqual(r.body, b"line one\r\n\tline *two*\n")

    def test_every_format_headers_and_head(self):
        i = self.doc()
        for fmt, ctype in CTYPES.items():
            r = self.export(i, fmt)
            self.assertEqual(r.status, 200, (fmt, r))
            self.assertEqual(r.header("Content-Type"), ctype)
            self.assertEqual(int(r.header("Content-Length")), len(r.body))
            self.assertGreater(len(r.body), 0)
            self.assertEqual(disposition_names(r.header("Content-Disposition")),
                             (f"Tea guide.{fmt}", f"Tea guide.{fmt}", f"Tea guide.{fmt}"))
            self.assertEqual(r.header("X-Content-Type-Options"), "nosniff")
            h = self.export(i, fmt, method="HEAD")
            self.assertEqual((h.status, h.body), (200, b""))
            self.assertEqual(h.header("Content-Type"), ctype)
            self.assertEqual(h.header("Content-Disposition"), r.header("Content-Disposition"))
        self.assertTrue(self.export(i, "pdf").body.startswith(b"%PDF-"))
        self.assertTrue(self.export(i, "docx").body.startswith(b"PK\x03\x04"))

    def test_html_escapes_name_and_result(self):
        name = "<script>alert('n')</script> & \"Tea\""
        result = "# Head <b>\n\n<script>alert(1)</script> & 'x' **<i>bold</i>**\n\n- item <img src=x>\n"
        r = self.export(self.doc(name=name, result=result), "html")
        self.assertEqual((r.status, r.header("Content-Type")), (200, CTYPES["html"]))
        body = r.body.decode()
        self.assertNotIn("<script", body)
        self.assertNotIn("<img", body)
        self.assertNotIn("<b>", body)
        self.assertNotIn("<i>", body)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;x&#39;", body)
        self.assertIn("<strong>&lt;i&gt;bold&lt;/i&gt;</strong>", body)

        class Walk(html.parser.HTMLParser):
            def __init__(self):
                super().__init__()
                self.tags, self.text, self.stack = [], {}, []

            def handle_starttag(self, tag, attrs):
                self.tags.append(tag)
                if tag not in ("meta", "br", "img", "link"):  # void elements
                    self.stack.append(tag)

            def handle_endtag(self, tag):
                assert self.stack and self.stack[-1] == tag, (tag, self.stack)
                self.stack.pop()

            def handle_data(self, data):
                if self.stack:
                    self.text.setdefault(self.stack[-1], []).append(data)

        w = Walk()
        w.feed(body)
        w.close()
        self.assertEqual(w.stack, [])  # every element closed, in order
        self.assertEqual("".join(w.text["title"]), name)
        self.assertEqual(w.text["h1"], [name])
        self.assertEqual(w.text["h2"], ["Head <b>"])
        self.assertEqual(w.text["li"], ["item <img src=x>"])
        self.assertEqual([t for t in w.tags if t in ("h1", "h2", "p", "ul", "li", "strong")],
                         ["h1", "h2", "p", "strong", "ul", "li"])

    def test_html_structure(self):
        r = self.export(self.doc(), "html")
        body = r.body.decode()
        self.assertTrue(body.startswith("<!DOCTYPE html>"))
        self.assertIn("<h3>First steps</h3>", body)  # "##": the name is the only h1
        self.assertIn("<ol>\n<li>Boil the water</li>\n<li>Warm the pot</li></ol>", body)
        self.assertIn("<li>Ελληνικά: τσάι<ul>\n<li>nested leaf</li></ul>", body)
        self.assertIn("<p>An introduction with <strong>bold</strong> and <em>italic</em> words.</p>",
                      body)

    def test_html_lang_is_the_documents_language(self):
        # <html lang> is the record's `language` (§17), so screen readers and
        # hyphenation read the text in its language; a document created without one has
        # §17's default, `en` (a stored tag that is not BCP 47 also gets `en`: the store
        # checks every tag it takes, so only a hand-edited database has one)
        self.assertIn('<html lang="en">', self.export(self.doc(), "html").body.decode())
        d = self.make_doc(name="Colour", language="en-GB")
        self.assertEqual(d["language"], "en-GB")
        self.req("PUT", f"/api/v1/documents/{d['id']}", key="alice", form={"result": "Colour."})
        body = self.export(d["id"], "html").body.decode()
        self.assertTrue(body.startswith('<!DOCTYPE html>\n<html lang="en-GB">\n'), body[:60])
        # and in a ZIP of HTML exports (§23), each file its document's language
        other = self.doc(name="Plain")
        r = self.req("POST", "/api/v1/documents/bulk", key="alice",
                     form={"action": "export", "format": "html", "ids": f"{d['id']},{other}"})
        self.assertEqual(r.status, 200, r)
        z = zipfile.ZipFile(io.BytesIO(r.body))
        self.assertIn('<html lang="en-GB">', z.read("Colour.html").decode())
        self.assertIn('<html lang="en">', z.read("Plain.html").decode())

    def test_docx_read_by_pandoc_and_zipfile(self):
        r = self.export(self.doc(), "docx")
        self.assertEqual((r.status, r.header("Content-Type")), (200, CTYPES["docx"]))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.docx")
            with open(path, "wb") as f:
                f.write(r.body)
            z = run("python3", "-m", "zipfile", "-t", path)
            self.assertEqual(z.returncode, 0, z)
            self.assertIn(b"Done testing", z.stdout)
            names = run("python3", "-m", "zipfile", "-l", path).stdout.decode()
            for part in ("[Content_Types].xml", "_rels/.rels", "word/document.xml",
                         "word/styles.xml", "word/numbering.xml", "word/_rels/document.xml.rels"):
                self.assertIn(part, names)
            plain = run("pandoc", "-f", "docx", "-t", "plain", path)
            self.assertEqual(plain.returncode, 0, plain)
            text = plain.stdout.decode()
            order = ["Tea guide", "An introduction with bold and italic words.", "First steps",
                     "Boil the water", "Warm the pot", "Scripts", "Русский: чай с лимоном",
                     "中文：绿茶和红茶", "nested leaf", "A closing paragraph."]
            pos = [text.find(s) for s in order]
            self.assertNotIn(-1, pos, text)
            self.assertEqual(pos, sorted(pos), text)
            # the structure survives: headings, numbered and bulleted lists, emphasis
            md = run("pandoc", "-f", "docx", "-t", "markdown", path).stdout.decode()
            self.assertIn("# Tea guide", md)
            self.assertIn("### First steps", md)
            self.assertRegex(md, r"1\.\s+Boil the water")
            self.assertRegex(md, r"2\.\s+Warm the pot")
            self.assertRegex(md, r"-\s+Русский: чай с лимоном")
            self.assertRegex(md, r"\n {4}-\s+nested leaf")
            self.assertIn("**bold**", md)
            self.assertIn("*italic*", md)

    def test_pdf_checked_by_poppler_and_qpdf(self):
        long_result = RESULT + "\n\n" + " ".join(f"w{n:04d}" for n in range(1500)) + "\n\n" + "\n\n".join(
            f"Paragraph {n}: " + "the tea leaves unfold slowly in hot water. " * 12 for n in range(60))
        r = self.export(self.doc(result=long_result), "pdf")
        self.assertEqual((r.status, r.header("Content-Type")), (200, CTYPES["pdf"]))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.pdf")
            with open(path, "wb") as f:
                f.write(r.body)
            q = run("qpdf", "--check", path)
            self.assertEqual(q.returncode, 0, q)
            text = run("pdftotext", "-layout", path, "-").stdout.decode()
            for line in ("Tea guide", "First steps", "1. Boil the water", "Русский: чай с лимоном",
                         "中文：绿茶和红茶", "Ελληνικά: τσάι", "nested leaf", "Paragraph 59:"):
                self.assertIn(line, text)
            self.assertNotIn("\ufffd", text)
            # one long paragraph (laid out in slices): every word once, in order
            words = re.findall(r"w\d{4}", text)
            self.assertEqual(words, [f"w{n:04d}" for n in range(1500)])
            info = run("pdfinfo", path).stdout.decode()
            pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
            self.assertGreaterEqual(pages, 2)
            self.assertRegex(info, r"Page size:\s+595\.\d+ x 841\.\d+ pts \(A4\)")
            self.assertIn("Title:           Tea guide", info)
            # each page ends with its number
            for p in (1, pages):
                t = run("pdftotext", "-f", str(p), "-l", str(p), path, "-").stdout.decode()
                self.assertEqual(t.split()[-1], str(p))
            fonts = run("pdffonts", path).stdout.decode().splitlines()[2:]
            self.assertTrue(fonts)
            families = " ".join(f.split()[0] for f in fonts)
            self.assertIn("DejaVuSans", families)
            self.assertIn("NotoSansCJK", families)
            for f in fonts:  # name type [type] encoding emb sub uni id gen
                cols = f.split()
                self.assertEqual(cols[-5], "yes", f)  # embedded

    def test_unknown_format_422(self):
        i = self.doc()
        for fmt in ("doc", "PDF", "md%20", "%ZZ", "pdf%00"):
            r = self.export(i, fmt)
            self.assertEqual(r.status, 422, (fmt, r))
            self.assertEqual(list(r.json["message"]), ["format"])
            self.assertEqual(r.json["status"], 422)
        self.assertEqual(self.export(i, "doc").json["message"],
                         {"format": ["The selected format is invalid."]})

    def test_404_401_405(self):
        i = self.doc()
        r = self.req("GET", f"/api/v1/documents/{i}/export?format=pdf", key="bob")  # not bob's
        self.assertEqual((r.status, r.json), (404, NOTFOUND))
        for path in (f"/api/v1/documents/{i + 1000}/export", "/api/v1/documents/0/export",
                     "/api/v1/documents/x/export", "/api/v1/images/1/export",
                     f"/api/v1/documents/{i}/exports", f"/api/v1/documents/{i}/export/x"):
            r = self.req("GET", path + "?format=pdf")
            self.assertEqual((r.status, r.json), (404, NOTFOUND), path)
        r = self.req("GET", f"/api/v1/documents/{i}/export", key=None)
        self.assertEqual((r.status, r.json), (401, {"message": "Unauthenticated.", "status": 401}))
        self.assertEqual(r.header("WWW-Authenticate"), "Bearer")
        r = self.req("POST", f"/api/v1/documents/{i}/export", form={"format": "md"})
        self.assertError(r, 405, "Method not allowed.")
        self.assertEqual(r.header("Allow"), "GET, HEAD")

    def test_awkward_names(self):
        cases = [
            # name, ascii fallback (without extension), utf-8 name
            ('a "quoted" \\back/slash', "a _quoted_ _back_slash", 'a _quoted_ _back_slash'),
            ("Отчёт за год", "_____ __ ___", "Отчёт за год"),
            ("日本語の文書", "______", "日本語の文書"),
            ("..hidden. ", "hidden", "hidden"),
            ("tab\there\u0085c1", "tab_here_c1", "tab_here_c1"),
            ("100% done; x=y*", "100_ done; x=y_", "100% done; x=y_"),
            ("...", "document", "document"),
            ("Ω" * 255, "_" * 100, "Ω" * 100),
        ]
        for name, ascii_name, utf8_name in cases:
            r = self.export(self.doc(name=name), "txt")
            self.assertEqual(r.status, 200, (name, r))
            fallback, decoded, raw = disposition_names(r.header("Content-Disposition"))
            self.assertEqual(fallback, ascii_name + ".txt", name)
            self.assertEqual(decoded, utf8_name + ".txt", name)
            self.assertEqual(raw, decoded)
            self.assertTrue(all(0x20 <= ord(c) < 0x7f for c in fallback))


def md_structure(text):
    """(headings, list items) a CommonMark reader finds in the lines of a builtin text:
    ATX headings ('#'..'###### ' at the start) and list items ('- ', '* ', '+ ', '1. ')."""
    heads = items = 0
    for line in text.splitlines():
        if re.match(r"#{1,6}( |$)", line):
            heads += 1
        elif re.match(r"\s*([-*+]|\d{1,9}[.)]) ", line):
            items += 1
    return heads, items


def pandoc_structure(blocks):
    """(headings below the name, list items) in a pandoc JSON AST."""
    heads = items = 0
    stack = list(blocks)
    while stack:
        b = stack.pop()
        if not isinstance(b, dict):
            continue
        t, c = b.get("t"), b.get("c")
        if t == "Header" and c[0] >= 2:
            heads += 1
        elif t in ("BulletList", "OrderedList"):
            lst = c if t == "BulletList" else c[1]
            items += len(lst)
            for item in lst:
                stack.extend(item)
        elif t in ("BlockQuote", "Div"):
            stack.extend(c if t == "BlockQuote" else c[1])
    return heads, items


class Structure(ServerTest):
    """The builtin generator writes Markdown (API.md §17) and the exports render it."""

    def test_every_template_keeps_headings_and_lists(self):
        templates = self.req("GET", "/api/v1/templates").json["data"]
        self.assertEqual(len(templates), 52)
        with_heads = with_items = 0
        for t in templates:
            d = self.make_doc(name=f"T{t['id']}", template_id=str(t["id"]),
                              prompt="green tea for busy office workers: brewing, cups and timing")
            text = d["result"]
            heads, items = md_structure(text)
            with_heads += heads > 0
            with_items += items > 0
            r = self.export(d["id"], "docx")
            self.assertEqual(r.status, 200, r)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "t.docx")
                with open(path, "wb") as f:
                    f.write(r.body)
                out = run("pandoc", "-f", "docx", "-t", "json", path)
                self.assertEqual(out.returncode, 0, out)
                ast = json.loads(out.stdout)
                self.assertEqual(pandoc_structure(ast["blocks"]), (heads, items),
                                 f"template {t['id']} ({t['name']}):\n{text}")
                if heads:  # and pandoc's Markdown shows them as '#' headings, a level down
                    md = run("pandoc", "-f", "docx", "-t", "markdown", path).stdout.decode()
                    self.assertEqual(len(re.findall(r"(?m)^##+ ", md)), heads, md)
            html = self.export(d["id"], "html").body.decode()
            self.assertEqual(len(re.findall(r"<h[2-6]>", html)), heads, html)
            self.assertEqual(html.count("<li>"), items, html)
        # blog posts, articles, product sheets... have headings; outlines and lists items
        self.assertGreaterEqual(with_heads, 15)
        self.assertGreaterEqual(with_items, 15)

    def test_hashtags_are_not_headings(self):
        d = self.make_doc(template_id="17", prompt="green tea for busy office workers")
        self.assertTrue(d["result"].startswith("#"), d)
        html = self.export(d["id"], "html").body.decode()
        self.assertNotIn("<h2>", html)
        self.assertIn("<p>#", html)

    def test_single_line_break_kept(self):
        i = Export.doc(self, name="Sheet", result="## Overview\nCreated for people\nwho like tea.\n\nNext")
        html = self.export(i, "html").body.decode()
        self.assertIn("<h3>Overview</h3>\n<p>Created for people<br>\nwho like tea.</p>", html)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.docx")
            with open(path, "wb") as f:
                f.write(self.export(i, "docx").body)
            md = run("pandoc", "-f", "docx", "-t", "markdown", path).stdout.decode()
            self.assertIn("### Overview", md)
            self.assertIn("Created for people\\\nwho like tea.", md)  # a hard line break
            path = os.path.join(tmp, "t.pdf")
            with open(path, "wb") as f:
                f.write(self.export(i, "pdf").body)
            text = run("pdftotext", path, "-").stdout.decode()
            self.assertIn("Overview\nCreated for people\nwho like tea.", text)

    def test_pdf_emoji_embedded(self):
        i = Export.doc(self, name="Party 🎉", result="Tea time 😀 and cake 🍰.\n\n- ✅ done\n")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.pdf")
            with open(path, "wb") as f:
                f.write(self.export(i, "pdf").body)
            fonts = run("pdffonts", path).stdout.decode().splitlines()[2:]
            emoji = [f for f in fonts if "Symbola" in f.split()[0]]
            self.assertTrue(emoji, fonts)
            self.assertEqual(emoji[0].split()[-5], "yes")  # embedded
            text = run("pdftotext", path, "-").stdout.decode()
            for ch in ("😀", "🍰", "✅", "🎉"):  # text, not pictures: searchable, copyable
                self.assertIn(ch, text)
            images = run("pdfimages", "-list", path).stdout.decode().splitlines()[2:]
            self.assertEqual(images, [])  # no colour emoji drawn as bitmaps

    export = Export.export


class NotCompleted(ServerTest):
    # the generation sleeps 5 s (scaled): every export below meets it unfinished
    server_args = ["--builtin-delay-ms", str(int(5000 * SLOW))]

    def test_409_until_completed(self):
        r = self.req("POST", "/api/v1/documents", form={"name": "Slow", "prompt": "tea"},
                     headers={"Prefer": "respond-async"})
        self.assertEqual((r.status, r.json["data"]["state"]), (202, "queued"), r)
        path = f"/api/v1/documents/{r.json['data']['id']}/export"
        for q in ("", "?format=md", "?format=pdf", "?format=docx"):
            r = self.req("GET", path + q)
            self.assertEqual((r.status, r.json),
                             (409, {"message": "The document has no result yet.", "status": 409}))
        self.assertEqual(self.req("GET", path + "?format=x").status, 422)
        self.assertEqual(self.req("GET", path, key="bob").status, 404)
