"""Seeds an inkwell server with N documents over one keep-alive connection.
usage: seed.py PORT KEY N"""
import http.client
import sys
import urllib.parse

port, key, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
words = ["tea", "coffee", "garden", "ocean", "city", "bike", "travel", "recipe", "music", "code"]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
for i in range(n):
    body = urllib.parse.urlencode({"name": f"{words[i % 10]} note {i}", "prompt": f"a short note on {words[i % 10]} {i}",
                                   "template_id": str(i % 52 + 1), "creativity": "0"})
    c.request("POST", "/api/v1/documents", body=body, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/x-www-form-urlencoded",
        "Prefer": "respond-async"})
    r = c.getresponse()
    r.read()
    if r.status != 202:
        sys.exit(f"seed failed at {i}: {r.status}")
