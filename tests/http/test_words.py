"""Black-box tests of `words` counted as a reader would (issue 38 item 6): the segments
ICU's word boundaries find that are words (letters, numbers, kana, ideographs), so
Japanese, Chinese and Thai count by their words, not by spaces. On the record, its
revisions, and the month's usage; checked against fixed counts and, where Node is
installed, against Intl.Segmenter (granularity "word", isWordLike: the web app's rule,
another ICU). Both backends (INKWELL_TEST_BACKEND)."""
import json
import shutil
import subprocess

from harness import ServerTest

TEXTS = [
    ("ja", "今日は良い天気ですね。公園を散歩しましょう。", 11),
    ("ja", "私は日本語を勉強しています。毎日少しずつ読みます。", 13),
    ("zh", "我们今天去公园散步。天气很好，阳光明媚。", 9),
    ("zh", "中文的词语没有空格分开。", 6),
    ("th", "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ", 8),
    ("ko", "오늘은 날씨가 좋습니다. 공원에 갑시다.", 5),
    ("de", "Die Donaudampfschifffahrtsgesellschaft fährt heute nicht.", 5),
    ("de", "Straßenbahn, Übergrößen und Öffnungszeiten.", 4),
    ("en", "The quick brown fox jumps over the lazy dog.", 9),
    ("en", "don't stop-believing, it's 3.14 and 1,000 e.g. 🎉 party time", 10),
]


def segmenter_words(texts):
    """Intl.Segmenter's counts of texts (Node), or None without Node."""
    node = shutil.which("node")
    if not node:
        return None
    js = ("const t=JSON.parse(require('fs').readFileSync(0,'utf8'));"
          "const s=new Intl.Segmenter(undefined,{granularity:'word'});"
          "console.log(JSON.stringify(t.map(x=>[...s.segment(x)].filter(g=>g.isWordLike).length)))")
    out = subprocess.run([node, "-e", js], input=json.dumps(texts).encode(), capture_output=True,
                         timeout=60)
    return json.loads(out.stdout) if out.returncode == 0 else None


class Words(ServerTest):
    def test_edited_texts_count_by_their_words(self):
        d = self.make_doc(prompt="a note")
        for lang, text, want in TEXTS:
            r = self.req("PUT", f"/api/v1/documents/{d['id']}", form={"result": text})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json["data"]["words"], want, (lang, text))
            r = self.req("GET", f"/api/v1/documents/{d['id']}")
            self.assertEqual(r.json["data"]["words"], want, (lang, text))
            top = self.req("GET", f"/api/v1/documents/{d['id']}/revisions").json["data"][0]
            self.assertEqual(top["result"], text)
            self.assertEqual(top["words"], want, (lang, text))

    def test_fixed_counts_agree_with_intl_segmenter(self):
        got = segmenter_words([t for _, t, _ in TEXTS])
        if got is None:
            self.skipTest("node is not installed")
        self.assertEqual(got, [w for _, _, w in TEXTS])

    def test_generated_words_are_the_records_and_the_usage(self):
        before = self.req("GET", "/api/v1/usage", key="bob").json["data"]["words"]["used"]
        d = self.make_doc(key="bob", prompt="a post about gardens and rain")
        after = self.req("GET", "/api/v1/usage", key="bob").json["data"]["words"]["used"]
        self.assertEqual(after - before, d["words"])
        got = segmenter_words([d["result"]])
        if got is not None:
            self.assertEqual(d["words"], got[0])

    def test_builtin_length_and_tone_through_the_api(self):
        """§17: short about half of medium, long about twice; tones differ (the unit
        test, tests/unit/test_builtin_text.c, covers every template)."""
        words = {}
        for length in ("short", "medium", "long"):
            d = self.make_doc(prompt="a post about growing tomatoes on a balcony", template_id=9,
                              length=length, creativity=0)
            self.assertEqual(d["length"], length)
            words[length] = d["words"]
        self.assertTrue(0.3 <= words["short"] / words["medium"] <= 0.75, words)
        self.assertTrue(1.5 <= words["long"] / words["medium"] <= 2.8, words)
        texts = {}
        for tone in ("neutral", "formal", "casual", "witty"):
            d = self.make_doc(prompt="a post about growing tomatoes on a balcony", template_id=9,
                              tone=tone, creativity=0)
            self.assertEqual(d["tone"], tone)
            texts[tone] = d["result"]
        self.assertEqual(len(set(texts.values())), 4, texts)


if __name__ == "__main__":
    import unittest
    unittest.main()
