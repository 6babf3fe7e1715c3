// check.mjs — third-party checks of inkwell's OpenAPI document (src/api/openapi.json):
//   node check.mjs lint              the document is valid OpenAPI 3.1 (@apidevtools/swagger-parser)
//                                    and Redocly's linter (recommended rules) reports nothing
//   node check.mjs client            a typed client generated from it (openapi-typescript)
//                                    compiles with client.ts (tsc --noEmit)
//   node check.mjs responses F.jsonl...
//                                    every exchange the black-box suite recorded
//                                    (tests/http/harness.py) conforms: the status is
//                                    documented for its route and method, required headers
//                                    are there and every documented header's value fits its
//                                    schema, the body has a documented media type and fits
//                                    its schema (Ajv, JSON Schema 2020-12); event streams are
//                                    checked event by event.
// Each mode ends with a line "<what>: N passed, N failed" (tests/run.sh counts it).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const docPath = path.resolve(here, "../../src/api/openapi.json");
const mode = process.argv[2];

async function lint() {
  // two independent tools: swagger-parser validates the document against the OpenAPI
  // 3.1 schema and resolves every $ref; Redocly's linter (its "recommended" rules) must
  // report no problem at all, warnings included.
  const { default: SwaggerParser } = await import("@apidevtools/swagger-parser");
  const { lint: redoclyLint, loadConfig } = await import("@redocly/openapi-core");
  let passed = 0, failed = 0;
  try {
    const api = await SwaggerParser.validate(docPath);
    if (!String(api.openapi).startsWith("3.1")) throw new Error(`openapi is ${api.openapi}, not 3.1`);
    console.log(`valid OpenAPI ${api.openapi}: ${Object.keys(api.paths).length} paths`);
    passed++;
  } catch (e) {
    console.log(`FAIL: swagger-parser: ${e.message}`);
    failed++;
  }
  try {
    const problems = await redoclyLint({ ref: docPath, config: await loadConfig({}) });
    for (const p of problems)
      console.log(`FAIL: redocly ${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    if (problems.length) failed++;
    else { console.log("redocly lint (recommended rules): no problems"); passed++; }
  } catch (e) {
    console.log(`FAIL: redocly: ${e.message}`);
    failed++;
  }
  console.log(`openapi lint: ${passed} passed, ${failed} failed`);
  return failed;
}

async function client() {
  const { default: openapiTS, astToString } = await import("openapi-typescript");
  const out = path.join(here, "generated");
  fs.mkdirSync(out, { recursive: true });
  let failed = 0;
  try {
    const ast = await openapiTS(new URL(`file://${docPath}`));
    fs.writeFileSync(path.join(out, "inkwell.ts"), astToString(ast));
    execFileSync(path.join(here, "node_modules/.bin/tsc"), ["--noEmit", "-p", path.join(here, "tsconfig.json")],
                 { stdio: "inherit" });
    console.log("generated client compiles (tsc --noEmit)");
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
    failed = 1;
  }
  console.log(`openapi client: ${1 - failed} passed, ${failed} failed`);
  return failed;
}

async function responses(files) {
  const { default: Ajv2020 } = await import("ajv/dist/2020.js");
  const { default: addFormats } = await import("ajv-formats");
  const doc = JSON.parse(fs.readFileSync(docPath, "utf8"));
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");
  const compiled = new Map();
  const validator = (pointer) => {
    if (!compiled.has(pointer)) compiled.set(pointer, ajv.compile({ $ref: `openapi#${pointer}` }));
    return compiled.get(pointer);
  };
  const esc = (s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
  const deref = (obj, pointer) => { // follows $ref of responses and headers; returns [obj, pointer]
    while (obj && obj.$ref) {
      pointer = obj.$ref.slice(1);
      obj = pointer.split("/").slice(1).reduce((o, k) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    }
    return [obj, pointer];
  };
  // concrete paths before templated ones (OpenAPI: "/healthz" wins over "/{file}")
  const routes = Object.keys(doc.paths).map((t) => ({
    template: t,
    params: (t.match(/\{/g) || []).length,
    re: new RegExp("^" + t.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+") + "$"),
  })).sort((a, b) => a.params - b.params);
  const common = ["400", "413", "431", "500", "503"];
  const compRef = (name) => ({ $ref: `#/components/responses/${name}` });
  // Answers for paths the document does not list, and for methods a path does not take
  // (the document's info.description says so).
  const unmatched = (p) => Object.fromEntries([
    ["404", compRef("NotFound")],
    ...(p.startsWith("/api/v1/") ? [["401", compRef("Unauthenticated")], ["429", compRef("TooManyAttempts")]] : []),
    ...common.map((s) => [s, compRef({ 400: "BadRequest", 413: "PayloadTooLarge", 431: "HeadersTooLarge", 500: "ServerError", 503: "Unavailable" }[s])]),
  ]);

  const combos = new Map(); // "METHOD template status" -> {n, failures: []}
  let exchanges = 0;
  for (const file of files) {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
      if (!line.trim()) continue;
      const x = JSON.parse(line);
      exchanges++;
      const errors = [];
      const rawPath = x.path.split("?")[0];
      let p = rawPath;
      if (p.length > 8 && p.endsWith("/") && p.startsWith("/api/v1/")) p = p.slice(0, -1);
      const method = x.method.toUpperCase();
      const route = routes.find((r) => r.re.test(p));
      const opMethod = method === "HEAD" ? "get" : method.toLowerCase();
      let respMap, basePointer, template;
      if (!route) {
        template = "(unlisted path)";
        respMap = unmatched(p);
        basePointer = null;
      } else if (!doc.paths[route.template][opMethod]) {
        template = route.template;
        respMap = Object.assign(unmatched(p), { "405": compRef("MethodNotAllowed") });
        if (!p.startsWith("/api/v1/") || route.template === "/api/v1/openapi.json") { delete respMap["401"]; delete respMap["429"]; }
        basePointer = null;
      } else {
        template = route.template;
        respMap = doc.paths[route.template][opMethod].responses;
        basePointer = `/paths/${esc(route.template)}/${opMethod}/responses`;
      }
      const key = `${method} ${template} ${x.status}`;
      const statusKey = [String(x.status), `${String(x.status)[0]}XX`].find((k) => k in respMap);
      if (!statusKey) {
        errors.push(`status ${x.status} is not documented (documented: ${Object.keys(respMap).join(", ")})`);
      } else {
        const [resp, rpointer] = deref(respMap[statusKey], basePointer ? `${basePointer}/${esc(statusKey)}` : null);
        const hdrs = new Map(x.headers.map(([k, v]) => [k.toLowerCase(), v]));
        for (const [name, h0] of Object.entries(resp.headers || {})) {
          const [h, hpointer] = deref(h0, `${rpointer}/headers/${esc(name)}`);
          const v = hdrs.get(name.toLowerCase());
          if (v === undefined) {
            if (h.required) errors.push(`header ${name} is required but missing`);
            continue;
          }
          const validate = validator(`${hpointer}/schema`);
          if (!validate(v) && !(/^-?\d+$/.test(v) && validate(Number(v))))
            errors.push(`header ${name}: ${JSON.stringify(v)} ${ajv.errorsText(validate.errors)}`);
        }
        const ctype = (hdrs.get("content-type") || "").split(";")[0].trim().toLowerCase();
        const noBody = method === "HEAD" || x.status === 304 || x.status === 204;
        // RFC 9110 §8.6: a 304 may carry only the 200's length; inkwell sends none
        if (x.status === 304 && hdrs.has("content-length"))
          errors.push(`a 304 with Content-Length: ${hdrs.get("content-length")}`);
        if (!noBody) {
          const content = resp.content || {};
          if (!Object.keys(content).length) {
            if (x.body_len) errors.push(`a body (${ctype}) where none is documented`);
          } else if (!(ctype in content) && !("*/*" in content)) {
            errors.push(`content type ${JSON.stringify(ctype)} is not documented (${Object.keys(content).join(", ")})`);
          } else {
            const mt = ctype in content ? ctype : "*/*";
            const spointer = `${rpointer}/content/${esc(mt)}/schema`;
            if (ctype === "application/json") {
              let body;
              try { body = JSON.parse(x.body); } catch { errors.push("the body is not JSON"); }
              if (body !== undefined) {
                const validate = validator(spointer);
                if (!validate(body)) errors.push(`body: ${ajv.errorsText(validate.errors)}`);
              }
            } else if (ctype === "text/event-stream") {
              const [schema] = deref(content[ctype].schema, spointer);
              errors.push(...checkStream(x.body ?? "", doc, schema.contentSchema?.items, validator));
            } else if (x.body !== undefined && content[mt].schema.pattern) {
              if (!new RegExp(content[mt].schema.pattern).test(x.body))
                errors.push(`body does not match ${content[mt].schema.pattern}`);
            }
          }
        }
      }
      const c = combos.get(key) || { n: 0, failures: [] };
      c.n++;
      if (errors.length) c.failures.push(`${method} ${x.path} -> ${x.status}: ${errors.join("; ")}`);
      combos.set(key, c);
    }
  }
  let passed = 0, failed = 0;
  for (const [key, c] of [...combos].sort()) {
    if (c.failures.length) {
      failed++;
      console.log(`FAIL: ${key}: ${c.failures.length} of ${c.n} answers do not conform`);
      for (const f of c.failures.slice(0, 3)) console.log(`    ${f}`);
    } else {
      passed++;
      console.log(`ok    ${key} (${c.n})`);
    }
  }
  if (exchanges === 0) { console.log("FAIL: no exchanges recorded"); failed++; }
  console.log(`${exchanges} answers checked, in ${combos.size} (method, route, status) groups`);
  console.log(`openapi responses: ${passed} passed, ${failed} failed`);
  return failed;
}

// Server-Sent Events: each event (its fields event, data, id) fits the stream's item
// schema (ServerSentEvent, OpenAPI 3.2's itemSchema), and its data, parsed as JSON, the
// contentSchema of the branch for its event name; the first event is `record`.
function checkStream(text, doc, itemRef, validator) {
  const errors = [];
  if (!itemRef || !itemRef.$ref) return ["the event stream has no contentSchema.items"];
  const itemPointer = itemRef.$ref.slice(1);
  const item = itemPointer.split("/").slice(1).reduce((o, k) => o[k], doc);
  const branches = new Map(); // event name -> pointer of its schema
  for (const b of item.oneOf || []) {
    const ptr = b.$ref.slice(1);
    const s = ptr.split("/").slice(1).reduce((o, k) => o[k], doc);
    branches.set(s.properties.event.const, ptr);
  }
  const names = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const ev = {};
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "event" || field === "id" || field === "retry") ev[field] = value;
      else errors.push(`unknown SSE field ${field}`);
    }
    if (!data.length) continue;
    ev.event ??= "message";
    ev.data = data.join("\n");
    names.push(ev.event);
    const validateItem = validator(itemPointer);
    if (!validateItem(ev)) { errors.push(`event ${ev.event}: not a ServerSentEvent (${JSON.stringify(ev).slice(0, 120)})`); continue; }
    let v;
    try { v = JSON.parse(ev.data); } catch { errors.push(`event ${ev.event}: data is not JSON`); continue; }
    const validate = validator(`${branches.get(ev.event)}/properties/data/contentSchema`);
    if (!validate(v)) errors.push(`event ${ev.event}: ${JSON.stringify(validate.errors?.[0])}`);
  }
  if (names.length && names[0] !== "record") errors.push(`the first event is ${names[0]}, not record`);
  return errors;
}

let failed;
if (mode === "lint") failed = await lint();
else if (mode === "client") failed = await client();
else if (mode === "responses") failed = await responses(process.argv.slice(3));
else { console.error("usage: node check.mjs lint | client | responses FILE.jsonl..."); process.exit(2); }
process.exit(failed ? 1 : 0);
