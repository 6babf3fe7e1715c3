// receiver.js — a webhook receiver for the tests (tests/http/test_webhooks.py): listens
// on 127.0.0.1, verifies every delivery with the standardwebhooks package (an outside
// verifier of API.md §22's signatures, not inkwell's code) against each secret the test
// gave for the path, and answers what the test set for the path (a status, Retry-After,
// a delay). Control, as JSON:
//   POST /_config {"path": "/a", "secrets": ["whsec_..."], "status": 200,
//                  "retry_after": null, "delay_ms": 0, "location": null}
//   GET  /_log    every delivery so far: {path, headers, body, verified: [bool per
//                  secret], status (answered), at (ms)}
// Prints its port on the first line of stdout.
"use strict";
const http = require("http");
const { Webhook } = require("standardwebhooks");

const config = new Map(); // path -> {secrets, status, retry_after, delay_ms, location}
const log = [];

function read(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

const server = http.createServer(async (req, res) => {
  const body = await read(req);
  if (req.url === "/_config" && req.method === "POST") {
    const c = JSON.parse(body);
    config.set(c.path, c);
    res.writeHead(200, { "Content-Type": "application/json" });
    return res.end("{}");
  }
  if (req.url === "/_log") {
    res.writeHead(200, { "Content-Type": "application/json" });
    return res.end(JSON.stringify(log));
  }
  const c = config.get(req.url) || { secrets: [], status: 200 };
  const verified = (c.secrets || []).map((s) => {
    try {
      new Webhook(s).verify(body, req.headers);
      return true;
    } catch (e) {
      return false;
    }
  });
  const status = c.status || 200;
  const entry = { path: req.url, method: req.method, headers: req.headers, body, verified,
                  status, at: Date.now() };
  const answer = () => {
    log.push(entry);
    const h = { "Content-Type": "text/plain" };
    if (c.retry_after != null) h["Retry-After"] = String(c.retry_after);
    if (c.location) h["Location"] = c.location;
    res.writeHead(status, h);
    res.end(c.big ? "x".repeat(1 << 20) : "ok");
  };
  if (c.delay_ms) setTimeout(answer, c.delay_ms);
  else answer();
});

server.listen(Number(process.argv[2] || 0), "127.0.0.1", () => {
  process.stdout.write(server.address().port + "\n");
});
