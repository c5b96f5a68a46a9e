"""A real local HTTP server that speaks the OpenAI chat-completions protocol, for tests.

Run as a process: ``python tests/openai_stub_server.py`` binds 127.0.0.1 on a free port and
prints ``PORT <n>`` as its first line. Tests script its answers over HTTP:

* ``POST /_script`` with ``[{"content": "...", "status": 200, "delay": 0.0,
  "headers": {...}, "body": "<raw body>"}, ...]`` queues answers (first in, first out);
  ``content`` becomes ``choices[0].message.content``; ``body`` replaces the whole body
  (for malformed responses); ``status`` other than 200 sends an error.
* ``GET /_requests`` returns every chat request received (headers and JSON body).
* ``POST /_reset`` clears the queue and the log.

With an empty queue, ``/v1/chat/completions`` answers ``{}`` as the message content.
``"match": "<text>"`` on an item makes it answer only requests whose body contains the
text (e.g. a critic's focus); unmatched items wait in the queue.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_LOCK = threading.Lock()
_QUEUE: list[dict[str, Any]] = []
_LOG: list[dict[str, Any]] = []


def _take(body_text: str) -> dict[str, Any] | None:
    with _LOCK:
        for i, item in enumerate(_QUEUE):
            if not item.get("match") or item["match"] in body_text:
                return _QUEUE.pop(i)
    return None


class Handler(BaseHTTPRequestHandler):
    """Chat completions plus the scripting endpoints."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path == "/_requests":
            with _LOCK:
                data = json.dumps(_LOG).encode()
            self._send(200, data)
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:  # noqa: N802
        raw = self._body()
        if self.path == "/_script":
            with _LOCK:
                _QUEUE.extend(json.loads(raw))
            self._send(200, b"{}")
            return
        if self.path == "/_reset":
            with _LOCK:
                _QUEUE.clear()
                _LOG.clear()
            self._send(200, b"{}")
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, b'{"error": "not found"}')
            return
        text = raw.decode("utf-8", "replace")
        try:
            request = json.loads(text)
        except json.JSONDecodeError:
            self._send(400, b'{"error": {"message": "request body is not JSON"}}')
            return
        with _LOCK:
            _LOG.append({"headers": dict(self.headers), "body": request})
        item = _take(text) or {"content": "{}"}
        if item.get("delay"):
            time.sleep(float(item["delay"]))
        status = int(item.get("status", 200))
        if "body" in item:
            body = item["body"].encode()
        elif status != 200:
            body = json.dumps({"error": {"message": item.get("error", f"scripted {status}")}}
                              ).encode()
        else:
            body = json.dumps({
                "id": "stub-1", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model", ""),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": item["content"]}}],
            }).encode()
        self._send(status, body, item.get("headers"))


class StubClient:
    """Test-side handle on a running stub server process."""

    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process, self.port = process, port
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/v1"

    def _call(self, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.base + path, data=data,
                                         method="GET" if data is None else "POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def script(self, *items: dict[str, Any]) -> None:
        """Queue answers (see the module doc)."""
        self._call("/_script", list(items))

    def requests(self) -> list[dict[str, Any]]:
        """Every chat request received since the last reset."""
        return self._call("/_requests")

    def reset(self) -> None:
        """Clear the queue and the request log."""
        self._call("/_reset", {})


@contextlib.contextmanager
def running_stub() -> Iterator[StubClient]:
    """Start the server in a subprocess on a free port; stop it afterwards."""
    process = subprocess.Popen([sys.executable, __file__], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith("PORT "):
            raise RuntimeError(f"stub server did not start: {line!r}")
        yield StubClient(process, int(line.split()[1]))
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> None:
    """Serve on 127.0.0.1 (port from argv[1], default a free one) until killed."""
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
