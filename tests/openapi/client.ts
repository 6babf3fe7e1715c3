// client.ts — a small typed client over the types openapi-typescript generates from
// src/api/openapi.json (generated/inkwell.ts, made by `node check.mjs client`). It only
// has to compile: it shows that the document gives a usable client (operations, bodies,
// records, pages and errors all typed).
import type { paths, components } from "./generated/inkwell";

type Document = components["schemas"]["Document"];
type Image = components["schemas"]["Image"];
type DocumentPage = paths["/api/v1/documents"]["get"]["responses"][200]["content"]["application/json"];
type ListQuery = NonNullable<paths["/api/v1/documents"]["get"]["parameters"]["query"]>;
type CreateDocument = paths["/api/v1/documents"]["post"]["requestBody"]["content"]["application/json"];
type Created = paths["/api/v1/documents"]["post"]["responses"][201]["content"]["application/json"];
type Failed = paths["/api/v1/documents"]["post"]["responses"][502]["content"]["application/json"];
type Invalid = components["schemas"]["ValidationError"];
type Ready = components["schemas"]["Ready"];
type ExportFormat = NonNullable<paths["/api/v1/documents/{id}/export"]["get"]["parameters"]["query"]>["format"];

export class InkwellClient {
  constructor(private base: string, private key: string) {}

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const r = await fetch(this.base + path, {
      method,
      headers: { Authorization: `Bearer ${this.key}`, "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await r.json()) as T;
  }

  listDocuments(q: ListQuery = {}): Promise<DocumentPage> {
    const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
    return this.call<DocumentPage>("GET", `/api/v1/documents?${qs}`);
  }

  async createDocument(input: CreateDocument, idempotencyKey?: string): Promise<Document | string> {
    const res = await this.call<Created | Failed | Invalid>("POST", "/api/v1/documents", input,
      idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {});
    if ("data" in res) return res.data;
    return typeof res.message === "string" ? res.message : Object.keys(res.message).join(", ");
  }

  exportUrl(id: number, format: ExportFormat = "md"): string {
    return `${this.base}/api/v1/documents/${id}/export?format=${format}`;
  }

  async ready(): Promise<boolean> {
    const r = (await (await fetch(`${this.base}/readyz`)).json()) as Ready;
    return r.status === 200 && r.provider.configured;
  }
}

export function describe(d: Document): string {
  const words: number = d.words;
  const usage = d.usage ? `${d.usage.prompt_tokens}+${d.usage.completion_tokens} tokens` : "no usage";
  return `${d.name} (${d.template}, ${d.creativity_label}): ${d.state}, ${words} words, ${usage}${d.truncated ? ", truncated" : ""}`;
}

export function picture(i: Image): string | null {
  return i.state === "completed" ? i.url : null;
}
