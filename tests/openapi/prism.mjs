// prism.mjs — a validating proxy in front of a real inkwell: Stoplight Prism
// (@stoplight/prism-cli, `prism proxy --errors`) checks every request against the
// OpenAPI document (src/api/openapi.json) before passing it on, and every answer after.
// A representative replay of the black-box suite's traffic goes through it: every route
// and method, forms and JSON, list parameters in and out of their sets (§4: out of the
// set falls back), booleans in every accepted form, exports, streams, idempotent
// replays, and error answers to valid requests (404, 409, 422).
// Each exchange passes when Prism flagged neither the request nor the answer (no
// problem+json of Prism's, no sl-violations header) and the status is the expected one.
//   node prism.mjs INKWELL_BINARY
// Ends with "openapi prism: N passed, N failed" (tests/run.sh counts it).
import fs from "node:fs";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const docPath = path.resolve(here, "../../src/api/openapi.json");
const bin = path.resolve(process.argv[2] || path.join(here, "../../build/inkwell"));
const STEP_MS = 30000; // the most one step (start, request) may take before the run gives up

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(url, proc, what) {
  const until = Date.now() + STEP_MS;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${what} exited (${proc.exitCode})`);
    try { await fetch(url, { signal: AbortSignal.timeout(2000) }); return; } catch { await sleep(100); }
  }
  throw new Error(`${what} did not answer at ${url}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "inkwell-prism-"));
const children = [];
function start(cmd, args, log) {
  const out = fs.openSync(path.join(dir, log), "w");
  const p = spawn(cmd, args, { stdio: ["ignore", out, out] });
  children.push(p);
  return p;
}
function stopAll() {
  for (const p of children) if (p.exitCode === null) p.kill("SIGTERM");
}
process.on("exit", stopAll);

let passed = 0, failed = 0;
function result(ok, what, detail = "") {
  if (ok) { passed++; console.log(`ok    ${what}`); }
  else { failed++; console.log(`FAIL: ${what}${detail ? ": " + detail : ""}`); }
}

try {
  const data = path.join(dir, "data");
  const key = execFileSync(bin, ["key", "create", "--user", "alice", "--data-dir", data]).toString().trim().split("\n").pop();
  const port = await freePort(), pport = await freePort();
  const server = start(bin, ["serve", "--listen", `127.0.0.1:${port}`, "--data-dir", data], "inkwell.log");
  await waitFor(`http://127.0.0.1:${port}/healthz`, server, "inkwell");
  const prism = start(path.join(here, "node_modules/.bin/prism"),
                      ["proxy", docPath, `http://127.0.0.1:${port}`, "--errors", "-h", "127.0.0.1", "-p", String(pport)],
                      "prism.log");
  await waitFor(`http://127.0.0.1:${pport}/healthz`, prism, "prism");
  const base = `http://127.0.0.1:${pport}`;

  // One exchange through Prism; returns the response (body as text) or null.
  // refused: the server refuses the request too (expect is its 4xx), so Prism may
  // flag it instead of passing it on; a request the server accepts must never be.
  async function call(method, p, { form, json, headers = {}, auth = true, expect, name, refused = false } = {}) {
    const h = { ...headers };
    if (auth) h.Authorization = `Bearer ${key}`;
    let body;
    if (form) { body = new URLSearchParams(form).toString(); h["Content-Type"] = "application/x-www-form-urlencoded"; }
    if (json !== undefined) { body = JSON.stringify(json); h["Content-Type"] = "application/json"; }
    const what = name || `${method} ${p}${form ? " (form)" : json !== undefined ? " (json)" : ""}`;
    let r, text;
    try {
      r = await fetch(base + p, { method, headers: h, body, redirect: "manual", signal: AbortSignal.timeout(STEP_MS) });
      text = Buffer.from(await r.arrayBuffer()).toString("latin1");
    } catch (e) { result(false, what, e.message); return null; }
    const ctype = r.headers.get("content-type") || "";
    let problem = null;
    if (ctype.startsWith("application/problem+json")) {
      try { const b = JSON.parse(text); if (String(b.type || "").includes("stoplight.io/prism")) problem = b; } catch {}
    }
    const violations = r.headers.get("sl-violations");
    if (problem && refused && problem.status === 422 && String(problem.type).endsWith("UNPROCESSABLE_ENTITY"))
      result(true, `${what} -> refused by Prism too (${problem.status})`);
    else if (problem) result(false, what, `Prism: ${problem.title}: ${JSON.stringify(problem.validation ?? problem.detail).slice(0, 600)}`);
    else if (violations) result(false, what, `Prism violations: ${violations.slice(0, 600)}`);
    else if (expect !== undefined && r.status !== expect) result(false, what, `status ${r.status}, expected ${expect}: ${text.slice(0, 200)}`);
    else result(true, `${what} -> ${r.status}`);
    return { status: r.status, headers: r.headers, text };
  }
  const jsonOf = (x) => { try { return JSON.parse(x.text); } catch { return null; } };

  await call("GET", "/healthz", { auth: false, expect: 200 });
  await call("GET", "/readyz", { auth: false, expect: 200 });
  await call("GET", "/api/v1/openapi.json", { auth: false, expect: 200 });
  await call("GET", "/api/v1/templates", { expect: 200 });

  // stores: form and JSON, every creativity, async, idempotent
  const ids = [];
  for (const [c, t] of [["0", "9"], ["0.25", "6"], ["0.5", "17"], ["0.75", "41"], ["1", "52"]]) {
    const x = await call("POST", "/api/v1/documents", { form: { name: `Tea ${c}`, prompt: "green tea for busy office workers", creativity: c, template_id: t }, expect: 201 });
    if (x) ids.push(jsonOf(x)?.data?.id);
  }
  const j = await call("POST", "/api/v1/documents", { json: { name: "Json", prompt: "green tea", creativity: 0.25, template_id: 4 }, expect: 201 });
  const id = jsonOf(j)?.data?.id ?? ids[0];
  await call("POST", "/api/v1/documents", { form: { name: "Async", prompt: "tea" }, headers: { Prefer: "respond-async" }, expect: 202 });
  const idem = { name: "Once", prompt: "tea once" };
  await call("POST", "/api/v1/documents", { form: idem, headers: { "Idempotency-Key": "prism-1" }, expect: 201, name: "POST /api/v1/documents (idempotent, first)" });
  await call("POST", "/api/v1/documents", { form: idem, headers: { "Idempotency-Key": "prism-1" }, expect: 201, name: "POST /api/v1/documents (idempotent, replay)" });
  await call("POST", "/api/v1/documents", { form: { name: "Streamed", prompt: "tea stream" }, headers: { Accept: "text/event-stream" }, expect: 201, name: "POST /api/v1/documents (event stream)" });

  // updates: every boolean form the server takes
  for (const f of ["true", "TRUE", "False", "1", "0"])
    await call("PATCH", `/api/v1/documents/${id}`, { form: { favorite: f }, expect: 200, name: `PATCH document favorite=${f}` });
  for (const f of [true, false, 1, 0])
    await call("PUT", `/api/v1/documents/${id}`, { json: { favorite: f }, expect: 200, name: `PUT document favorite=${JSON.stringify(f)} (json)` });
  await call("PUT", `/api/v1/documents/${id}`, { form: { name: "Renamed", result: "# Title\n\nText\nwith a break.\n\n- a\n- b\n" }, expect: 200 });

  // lists: in the set, out of it (falls back), every filter
  const lists = [
    "?per_page=25&page=1&sort=asc&sort_by=name&favorite=TRUE&template_id=9",
    "?search=tea&favorite=true&template_id=9",
    "?search=tea&search_by=result&sort=asc",
    "?search=tea&sort_by=name&sort=desc",
    "?per_page=50&favorite=0&sort_by=id&sort=desc",
    "?per_page=100&page=2&favorite=false",
    "?per_page=7&page=0&sort=sideways&sort_by=colour&favorite=maybe&search_by=prompt&template_id=99",
    "?per_page=abc&page=-3&template_id=x",
    "",
  ];
  for (const q of lists) await call("GET", `/api/v1/documents${q}`, { expect: 200 });
  await call("GET", `/api/v1/documents/${id}`, { expect: 200 });
  await call("GET", `/api/v1/documents/${id}`, { headers: { Accept: "text/event-stream" }, expect: 200, name: "GET document (event stream)" });
  for (const f of ["md", "txt", "html", "docx", "pdf", ""])
    await call("GET", `/api/v1/documents/${id}/export?format=${f}`, { expect: 200, name: `export format=${f}` });
  await call("GET", `/api/v1/documents/${id}/export`, { expect: 200, name: "export (default)" });

  // revisions and regeneration (§16), usage (§19)
  await call("POST", `/api/v1/documents/${id}/regenerate`, { form: { tone: "friendly", length: "short" }, expect: 200, name: "POST regenerate (form)" });
  await call("POST", `/api/v1/documents/${id}/regenerate`, { headers: { Prefer: "respond-async" }, expect: 202, name: "POST regenerate (async)" });
  await sleep(1500);
  await call("GET", `/api/v1/documents/${id}/revisions?per_page=2&page=1`, { expect: 200 });
  await call("GET", `/api/v1/documents/${id}/revisions/1`, { expect: 200 });
  await call("POST", `/api/v1/documents/${id}/revisions/1/restore`, { expect: 200 });
  // actions (§17)
  await call("POST", `/api/v1/documents/${id}/actions`, { form: { action: "shorten", selection_start: "0", selection_end: "5" }, expect: 200, name: "POST action (form, selection)" });
  await call("POST", `/api/v1/documents/${id}/actions`, { json: { action: "change_tone", tone: "formal" }, expect: 200, name: "POST action (json)" });
  await call("POST", `/api/v1/documents/${id}/actions`, { json: { action: "translate", language: "de" }, expect: 422, name: "POST action translate (builtin: 422)" });
  await call("GET", "/api/v1/usage", { expect: 200 });

  // images
  const im = await call("POST", "/api/v1/images", { form: { name: "Lake", description: "a calm lake at dawn", resolution: "1024x1024", style: "vivid" }, expect: 201 });
  const img = jsonOf(im)?.data;
  await call("POST", "/api/v1/images", { json: { name: "Hill", description: "green hills", resolution: "1792x1024" }, expect: 201 });
  for (const q of ["?resolution=1792x1024&style=natural&favorite=1", "?resolution=800x600&style=loud&search_by=description", ""])
    await call("GET", `/api/v1/images${q}`, { expect: 200 });
  if (img) {
    await call("GET", `/api/v1/images/${img.id}`, { expect: 200 });
    await call("PATCH", `/api/v1/images/${img.id}`, { form: { favorite: "true", name: "Lake 2" }, expect: 200 });
    if (img.url) await call("GET", new URL(img.url).pathname, { auth: false, expect: 200, name: "GET /media/{file}" });
    await call("DELETE", `/api/v1/images/${img.id}`, { expect: 200 });
  }

  // error answers to valid requests: the answers must fit the document too
  await call("GET", "/api/v1/documents/999999", { expect: 404 });
  await call("GET", `/api/v1/documents/${id}/export?format=rtf`, { expect: 422, refused: true, name: "export format=rtf" });
  const q = await call("POST", "/api/v1/documents", { form: { name: "Queued", prompt: "tea" }, headers: { Prefer: "respond-async" }, expect: 202, name: "POST /api/v1/documents (async, for 409)" });
  const qid = jsonOf(q)?.data?.id;
  if (qid) await call("DELETE", `/api/v1/documents/${qid}`, { expect: 200 });
  await call("DELETE", `/api/v1/documents/${id}`, { expect: 200 });
  await call("GET", `/api/v1/documents/${id}`, { expect: 404, name: "GET deleted document" });
  await call("GET", "/", { auth: false, expect: 200 });
} catch (e) {
  result(false, "prism run", e.message);
  for (const log of ["inkwell.log", "prism.log"]) {
    const f = path.join(dir, log);
    if (fs.existsSync(f)) console.log(`--- ${log}\n${fs.readFileSync(f, "utf8").slice(-3000)}`);
  }
}
stopAll();
if (failed) {
  const f = path.join(dir, "prism.log");
  if (fs.existsSync(f)) console.log(`--- prism.log (last lines)\n${fs.readFileSync(f, "utf8").split("\n").slice(-40).join("\n")}`);
}
console.log(`openapi prism: ${passed} passed, ${failed} failed`);
await sleep(200);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
