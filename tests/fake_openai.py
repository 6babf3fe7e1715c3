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

Streaming. A chat request with "stream": true is answered as OpenAI does: Server-Sent
Events over chunked encoding, one chunk per event: a `data: {chat.completion.chunk}`
per piece of content (by default "Echo: <prompt>" cut into words), one with the
finish_reason, a usage chunk (empty choices) when stream_options.include_usage was
asked for, then `data: [DONE]`. A behaviour that is a dict without "status" scripts
the stream:
  "pieces": [...]          the content deltas (default: the echo in words)
  "reasoning": [...]       deltas sent first as delta.<reasoning_field> (default
                           field "reasoning_content"; "reasoning" also seen in the wild)
  "finish": "length"       the finish_reason (default "stop"; null: none sent)
  "usage": {..}            the usage object (default: counted words; false: none)
  "error_after": N         after N pieces, `data: {"error": ...}` and the end
  "drop_after": N          after N pieces, close the connection mid-stream
  "stall_after": N         after N pieces, go silent for 30 s, then drop
  "done": false            no `data: [DONE]` at the end (the chunked body still ends)
  "linger": SECS           after [DONE], keep the body open this long before ending it
  "plain": true            answer plain JSON (a server that ignores "stream"),
                           content = the pieces joined
  "delay": SECS            sleep this long before each piece
  "split": K               write the SSE bytes in writes of K bytes (lines and UTF-8
                           characters cut anywhere), CRLF line ends when "crlf": true
The script key "reject_stream_options": true makes every chat request that carries
stream_options fail with a 400 whose error names it (as vLLM's and older servers'
validation does), until the next reset.

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
            self.reject_stream_options = False

    def script(self, spec):
        with self.lock:
            for kind in ("chat", "images"):
                self.queues[kind].extend(spec.get(kind, []))
            if "reject_stream_options" in spec:
                self.reject_stream_options = bool(spec["reject_stream_options"])

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
        if kind == "chat" and STATE.reject_stream_options and "stream_options" in body:
            self.send_json(400, error_body("Unrecognized request argument supplied: "
                                           "stream_options", "invalid_request_error", None))
        elif isinstance(b, dict) and "status" not in b and kind == "chat":
            self.chat_stream(body, b)
        elif isinstance(b, dict):
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

    @staticmethod
    def prompt_of(body):
        messages = body.get("messages") or []
        return next((m.get("content", "") for m in reversed(messages)
                     if isinstance(m, dict) and m.get("role") == "user"), "")

    def chat_success(self, body, b):
        prompt = self.prompt_of(body)
        content = "" if b == "empty_content" else f"Echo: {prompt}"
        if body.get("stream") is True:
            self.chat_stream(body, {"pieces": [content] if b == "empty_content" else None})
            return
        self.send_json(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": len(str(prompt).split()),
                      "completion_tokens": len(content.split()), "total_tokens": 0},
        })

    def chat_stream(self, body, spec):
        """Streams a chat answer as scripted by spec (see the module's docstring)."""
        prompt = self.prompt_of(body)
        pieces = spec.get("pieces")
        if pieces is None:
            words = f"Echo: {prompt}".split(" ")
            pieces = [w if i == 0 else " " + w for i, w in enumerate(words)]
        finish = spec.get("finish", "stop")
        usage = spec.get("usage", {"prompt_tokens": len(str(prompt).split()),
                                   "completion_tokens": len(pieces),
                                   "total_tokens": len(str(prompt).split()) + len(pieces)})
        if spec.get("plain"):
            msg = {"role": "assistant", "content": "".join(pieces)}
            for r in spec.get("reasoning", []):
                msg[spec.get("reasoning_field", "reasoning_content")] = r
            answer = {"id": "chatcmpl-fake", "object": "chat.completion",
                      "created": int(time.time()), "model": body.get("model", ""),
                      "choices": [{"index": 0, "finish_reason": finish, "message": msg}]}
            if usage:
                answer["usage"] = usage
            self.send_json(200, answer)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        eol = "\r\n" if spec.get("crlf") else "\n"
        split = int(spec.get("split") or 0)

        def chunk(delta=None, finish_reason=None, extra=None):
            obj = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                   "created": int(time.time()), "model": body.get("model", ""),
                   "choices": [] if delta is None else
                   [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            obj.update(extra or {})
            return obj

        def send(data):
            raw = ("data: " + (data if isinstance(data, str) else json.dumps(data))
                   + eol + eol).encode()
            parts = [raw[i:i + split] for i in range(0, len(raw), split)] if split else [raw]
            for part in parts:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.flush()

        try:
            send(chunk({"role": "assistant", "content": ""}))
            field = spec.get("reasoning_field", "reasoning_content")
            for r in spec.get("reasoning", []):
                send(chunk({field: r}))
            for i in range(len(pieces) + 1):
                if spec.get("error_after") == i:
                    send({"error": {"message": f"{MARKER}: the model crashed",
                                    "type": "server_error", "code": spec.get("error_code")}})
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if spec.get("drop_after") == i:
                    self.drop()
                    return
                if spec.get("stall_after") == i:
                    time.sleep(HANG_SECONDS)
                    self.drop()
                    return
                if i == len(pieces):
                    break
                if spec.get("delay"):
                    time.sleep(float(spec["delay"]))
                send(chunk({"content": pieces[i]}))
            if finish is not None:
                send(chunk({}, finish))
            if usage and (body.get("stream_options") or {}).get("include_usage"):
                send(chunk(None, None, {"usage": usage}))
            if spec.get("done", True):
                send("[DONE]")
            if spec.get("linger"):  # [DONE], then the body stays open a while
                time.sleep(float(spec["linger"]))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

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
