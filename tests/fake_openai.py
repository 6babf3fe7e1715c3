#!/usr/bin/env python3
"""fake_openai.py - a fake OpenAI-compatible server for inkwell's tests.

Standard library only. Listens on 127.0.0.1 (port 0 by default: a free one) and
prints the port as the first line of standard output.

It speaks the wire format of POST /v1/chat/completions and POST
/v1/images/generations (also without the /v1 prefix). Tests script it over HTTP:

  POST /_control/script   {"chat": [behaviour, ...], "images": [behaviour, ...]}
                          queues behaviours, consumed one per request; an empty
                          queue means success
  GET  /_control/requests every request received so far: method, path, headers
                          (lower-case names), json (parsed body or null), client_port
  POST /_control/reset    clears the queues and the request log

Behaviours: "ok"; {"status": N, "retry_after": "1", "retry_after_date": SECS,
"code": "...", "type": "..."} (an OpenAI error body with that status);
"insufficient_quota"; "hang" (sleep 30 s, then drop); "malformed" (200, invalid
JSON); "missing_field" (200, JSON without the result); "empty_content" (chat: 200
with content ""); "oversized" (200, 40 MiB streamed without a length);
"oversized_declared" (the same with Content-Length); "wrong_size_png" (a valid PNG
of another size); "bad_png" (base64 of garbage); "url_only" (images: a URL instead
of b64_json); "redirect" (302 elsewhere); "drop" (close without answering).

Every error or junk body contains the word FAKEBODY, so tests can check that no
provider body reaches users or logs.
"""
import argparse
import base64
import json
import socket
import struct
import sys
import threading
import time
import zlib
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKER = "FAKEBODY"
HANG_SECONDS = 30
OVERSIZED_BYTES = 40 << 20
MAX_REQUEST_BODY = 8 << 20

ENDPOINTS = {
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/images/generations": "images",
    "/images/generations": "images",
}


class State:
    """Queues of behaviours and the request log, shared by the handler threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.queues = {"chat": [], "images": []}
            self.requests = []

    def script(self, spec):
        with self.lock:
            for kind in ("chat", "images"):
                self.queues[kind].extend(spec.get(kind, []))

    def next_behaviour(self, kind):
        with self.lock:
            return self.queues[kind].pop(0) if self.queues[kind] else "ok"

    def log(self, entry):
        with self.lock:
            self.requests.append(entry)

    def snapshot(self):
        with self.lock:
            return list(self.requests)


STATE = State()


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def make_png(width, height):
    """A real RGB PNG of width x height: red grows left to right, green top down."""
    xrow = bytearray(width * 3)
    xrow[0::3] = bytes((x * 255 // max(width - 1, 1)) for x in range(width))
    xrow[2::3] = bytes([128]) * width
    raw = bytearray()
    for y in range(height):
        row = bytearray(xrow)
        row[1::3] = bytes([y * 255 // max(height - 1, 1)]) * width
        raw += b"\x00" + row
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
            + png_chunk(b"IDAT", zlib.compress(bytes(raw), 1)) + png_chunk(b"IEND", b""))


def parse_size(size):
    try:
        w, h = (int(v) for v in str(size).split("x"))
    except ValueError:
        return None
    return (w, h) if 0 < w <= 4096 and 0 < h <= 4096 else None


def error_body(message, etype, code):
    return {"error": {"message": f"{MARKER}: {message}", "type": etype, "param": None,
                      "code": code}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients can reuse connections
    server_version = "fake-openai/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    # ---- plumbing ----

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(n, MAX_REQUEST_BODY)) if n > 0 else b""

    def send_bytes(self, status, data, ctype="application/json", extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status, obj, extra=None):
        self.send_bytes(status, json.dumps(obj).encode(), extra=extra)

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def stream_oversized(self, declared):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if declared:
            self.send_header("Content-Length", str(OVERSIZED_BYTES))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        chunk = (MARKER.encode() + b" ") * (1 << 16)
        sent = 0
        try:
            while sent < OVERSIZED_BYTES:
                part = chunk[:OVERSIZED_BYTES - sent]
                self.wfile.write(part)
                sent += len(part)
        except OSError:
            pass
        self.close_connection = True

    # ---- control ----

    def do_GET(self):
        if self.path.split("?")[0] == "/_control/requests":
            self.read_body()
            self.send_json(200, STATE.snapshot())
        else:
            self.send_json(404, error_body("no such route", "invalid_request_error", None))

    def control_post(self, path, raw):
        if path == "/_control/reset":
            STATE.reset()
            self.send_json(200, {"ok": True})
        elif path == "/_control/script":
            try:
                STATE.script(json.loads(raw or b"{}"))
            except (ValueError, AttributeError):
                self.send_json(400, {"ok": False})
                return
            self.send_json(200, {"ok": True})
        else:
            self.send_json(404, {"ok": False})

    # ---- the API ----

    def do_POST(self):
        raw = self.read_body()
        path = self.path.split("?")[0]
        if path.startswith("/_control/"):
            self.control_post(path, raw)
            return
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        kind = ENDPOINTS.get(path)
        STATE.log({"method": "POST", "path": path,
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "json": body, "client_port": self.client_address[1]})
        if kind is None:
            self.send_json(404, error_body("unknown url", "invalid_request_error", None))
            return
        self.behave(kind, STATE.next_behaviour(kind), body if isinstance(body, dict) else {})

    def behave(self, kind, b, body):
        if isinstance(b, dict):
            self.send_error_behaviour(b)
        elif b == "insufficient_quota":
            self.send_json(429, error_body("You exceeded your current quota.",
                                           "insufficient_quota", "insufficient_quota"))
        elif b == "hang":
            time.sleep(HANG_SECONDS)
            self.drop()
        elif b == "drop":
            self.drop()
        elif b == "redirect":
            self.send_bytes(302, b"", extra={"Location": "http://127.0.0.1:9/elsewhere"})
        elif b == "malformed":
            self.send_bytes(200, b'{"choices": [{"message": ' + MARKER.encode() + b" ...")
        elif b == "missing_field":
            self.send_json(200, {"object": "list", "note": MARKER})
        elif b in ("oversized", "oversized_declared"):
            self.stream_oversized(b == "oversized_declared")
        elif kind == "chat":
            self.chat_success(body, b)
        else:
            self.images_success(body, b)

    def send_error_behaviour(self, b):
        status = int(b.get("status", 500))
        extra = {}
        if "retry_after" in b:
            extra["Retry-After"] = str(b["retry_after"])
        if "retry_after_date" in b:
            extra["Retry-After"] = formatdate(time.time() + float(b["retry_after_date"]),
                                              usegmt=True)
        etype = b.get("type", "server_error" if status >= 500 else "invalid_request_error")
        self.send_json(status, error_body(f"scripted status {status}", etype, b.get("code")),
                       extra)

    def chat_success(self, body, b):
        messages = body.get("messages") or []
        prompt = next((m.get("content", "") for m in reversed(messages)
                       if isinstance(m, dict) and m.get("role") == "user"), "")
        content = "" if b == "empty_content" else f"Echo: {prompt}"
        self.send_json(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(str(prompt).split()),
                      "completion_tokens": len(content.split()), "total_tokens": 0},
        })

    def images_success(self, body, b):
        size = parse_size(body.get("size", "1024x1024"))
        if size is None:
            self.send_json(400, error_body("invalid size", "invalid_request_error",
                                           "invalid_size"))
            return
        if b == "wrong_size_png":
            size = (size[0] // 2, size[1] // 2 + 1)
        item = {"revised_prompt": f"Revised: {body.get('prompt', '')}"}
        if b == "bad_png":
            item["b64_json"] = base64.b64encode(f"{MARKER} not a png".encode()).decode()
        elif b == "url_only" or body.get("response_format") == "url":
            item["url"] = "https://images.example.invalid/fake.png"
        else:
            item["b64_json"] = base64.b64encode(make_png(*size)).decode()
        self.send_json(200, {"created": int(time.time()), "data": [item]})


class QuietServer(ThreadingHTTPServer):
    """Clients hanging up mid-answer (timeouts, caps) are normal here: no tracebacks."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
