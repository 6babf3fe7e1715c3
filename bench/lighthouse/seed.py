"""Seeds a server for bench/lighthouse.sh through the API: documents, images, a template
and a webhook. usage: seed.py PORT KEY. Waits until every record is generated."""
import http.client
import json
import sys
import time
import urllib.parse

port, key = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)


def call(method, path, fields=None):
    body = urllib.parse.urlencode(fields) if fields else None
    c.request(method, "/api/v1" + path, body=body, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/x-www-form-urlencoded"})
    r = c.getresponse()
    data = r.read()
    if r.status >= 300:
        sys.exit(f"seed: {method} {path}: {r.status} {data[:200]!r}")
    return json.loads(data) if data else None


for i, topic in enumerate(["tea", "a garden in spring", "the ocean", "city bikes", "bread"]):
    call("POST", "/documents", {"name": f"On {topic}", "prompt": f"a short essay on {topic}",
                                "template_id": str(i + 1)})
for topic in ["a lighthouse at dusk", "a red bicycle"]:
    call("POST", "/images", {"name": topic.capitalize(), "description": topic, "resolution": "1024x1024"})
call("POST", "/templates", {"name": "Field notes", "description": "Short notes from a walk",
                            "instruction": "Write short field notes on the subject."})
for _ in range(600):
    docs = call("GET", "/documents?per_page=10")["data"]
    imgs = call("GET", "/images?per_page=10")["data"]
    if all(r["state"] in ("completed", "failed") for r in docs + imgs):
        break
    time.sleep(0.1)
# last, so that no event is delivered (and none is sent: only deletes)
call("POST", "/webhooks", {"url": "http://127.0.0.1:9/inkwell", "events": "document.deleted",
                            "description": "bench"})
print(docs[-1]["id"], imgs[-1]["id"])
