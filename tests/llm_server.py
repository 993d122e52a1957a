"""A small OpenAI-compatible server for tests, written with the standard library.

It answers ``POST /v1/chat/completions`` from a script: a list of steps consumed in order (one
per request; when the script is used up, every request gets ``default``). A step is a dict:

``{"text": "..."}``                         a normal reply (``n`` copies unless ``texts`` given)
``{"texts": ["a", "b"]}``                   one choice per text
``{"status": 429, "retry_after": "1"}``     an error status, with an optional Retry-After header
``{"status": 503, "retry_after_date": 2}``  Retry-After as an HTTP date that many seconds ahead
``{"status": 429, "retry_after_ms": 250}``  the ``retry-after-ms`` header OpenAI also sends
``{"status": 500}``                         a server error
``{"status": 401, "code": "invalid_api_key"}``  any status; the body is OpenAI's error shape
                                            ``{"error": {"message", "type", "param", "code"}}``
``{"empty_choices": True}``                 ``choices: []``
``{"empty_content": True}``                 one choice whose content is ""
``{"raw": "not json"}``                     a malformed body served as application/json
                                            (``content_type`` changes the header, e.g. text/html)
``{"reset": True}``                         the connection is reset (RST, SO_LINGER 0): no reply
``{"close": True}``                         the connection is closed (FIN) without a reply
``{"truncate": 40, ...}``                   the reply (of the rest of the step) is announced
                                            with its full Content-Length but cut after 40 bytes
``{"chunked": True, "truncate": 40, ...}``  the same reply sent with chunked transfer encoding
                                            and cut after 40 bytes of body, without the final
                                            chunk: a response stream started and cut off
``{"delay": 2.0, "text": "late"}``          any step may sleep first (beyond the client's time-out)

The client (engine/llm/client.py) never asks for a streamed (SSE) reply, so a "truncated
stream" reaches it as a body cut short, which ``truncate`` (with or without ``chunked``) gives.

``check_model=True``: a request for a model not in ``models`` gets OpenAI's 404
``model_not_found`` error without consuming a step. ``api_key="..."``: a request without
``Authorization: Bearer <that key>`` gets OpenAI's 401 ``invalid_api_key`` error, likewise.

``answered`` counts the replies with status 200 and a non-empty choice that were sent whole to
a client still listening: the successful calls.

``usage`` is ``{"prompt_tokens": 10, "completion_tokens": 5}`` unless the step gives
``prompt_tokens`` / ``completion_tokens``. ``GET /v1/models`` lists ``models``. The server keeps
every request (``requests``: path, headers with lower-case names, JSON body, time) and the largest number of requests
it was handling at once (``max_in_flight``). A completion request's entry also gets ``reply``,
what the server did with it: ``status`` (None when nothing was sent), ``outcome`` (``ok``,
``empty``, ``malformed``, ``error``, ``reset``, ``closed``, ``truncated``, or ``abandoned`` when
the client had hung up, e.g. after its time-out, before the reply was ready) and ``usage``
(``(prompt, completion)`` tokens of a whole JSON reply the client received, else None).
"""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLMServer:
    def __init__(self, script=None, *, default=None, models=("fake-model", "other-model"), hold: float = 0.0,
                 check_model: bool = False, api_key: str | None = None):
        self.script = list(script or [])
        self.default = default or {"text": "default reply"}
        self.models = list(models)
        self.hold = hold  # seconds every completion takes (for concurrency tests)
        self.check_model = check_model  # unknown model -> 404 model_not_found
        self.api_key = api_key  # set: a request without this bearer key -> 401 invalid_api_key
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.answered = 0  # replies sent with status 200 and at least one non-empty choice
        self._lock = threading.Lock()
        self._connections: set = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.handle_error = self._handle_error
        # A short poll interval: stop() waits for the serving loop to notice (0.5 s by default).
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _handle_error(self, request, client_address) -> None:
        """A client that hangs up mid-request (the time-out tests' client does) is expected, not
        a traceback on the test run's stderr; anything else is reported as usual."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        ThreadingHTTPServer.handle_error(self._httpd, request, client_address)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completions(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def start(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut open keep-alive connections, so the client sees a dead server."""
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next_step(self) -> dict:
        with self._lock:
            return self.script.pop(0) if self.script else dict(self.default)

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def setup(self):
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self):
                with server._lock:
                    server._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass

            def _send(self, status: int, body: bytes, headers: dict | None = None, *, step: dict | None = None) -> bool:
                """Send a reply; ``step`` may cut it short (``truncate``, ``chunked``). True when
                the whole reply was sent."""
                step = step or {}
                cut = step.get("truncate")
                chunked = bool(step.get("chunked"))
                self.send_response(status)
                self.send_header("Content-Type", step.get("content_type", "application/json"))
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if cut is not None:
                    self.send_header("Connection", "close")
                self.end_headers()
                part = body if cut is None else body[: int(cut)]
                try:
                    if chunked:
                        for i in range(0, len(part), 16):  # several chunks, as a streaming server sends
                            piece = part[i:i + 16]
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        if cut is None:
                            self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.wfile.write(part)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return False
                if cut is not None:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_WR)  # FIN before the promised end
                    except OSError:
                        pass
                    return False
                return True

            def _record(self, body) -> dict:
                entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                         "t": time.monotonic()}
                with server._lock:
                    server.requests.append(entry)
                return entry

            def _client_gone(self) -> bool:
                """The client closed its end (e.g. it timed out) while the request was handled."""
                try:
                    readable, _, _ = select.select([self.connection], [], [], 0)
                    return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _hang_up(self, reset: bool) -> None:
                """End the connection without any reply: RST (SO_LINGER 0) or a plain FIN."""
                self.close_connection = True
                try:
                    if reset:
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.close()
                    else:
                        self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _error(self, status: int, message: str, *, type_: str | None = None, code=None,
                       headers: dict | None = None, step: dict | None = None) -> bool:
                """An error reply in OpenAI's shape."""
                if type_ is None:
                    type_ = "server_error" if status >= 500 else "invalid_request_error"
                body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
                return self._send(status, json.dumps(body).encode(), headers, step=step)

            def do_GET(self):
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list",
                            "data": [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                entry = self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                reply = entry["reply"] = {"status": None, "outcome": None, "usage": None}
                body = body if isinstance(body, dict) else {}
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._error(401, "Incorrect API key provided. You can find your API key at "
                                     "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
                    reply.update(status=401, outcome="error")
                    return
                if server.check_model and body.get("model") not in server.models:
                    self._error(404, f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                                code="model_not_found")
                    reply.update(status=404, outcome="error")
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    step = server._next_step()
                    if server.hold:
                        time.sleep(server.hold)
                    if step.get("delay"):
                        time.sleep(step["delay"])
                        if self._client_gone():
                            reply["outcome"] = "abandoned"
                            self.close_connection = True
                            return
                    self._answer(step, body, reply)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, step: dict, body: dict, reply: dict) -> None:
                if step.get("reset") or step.get("close"):
                    reply["outcome"] = "reset" if step.get("reset") else "closed"
                    self._hang_up(reset=bool(step.get("reset")))
                    return
                cut = "truncate" in step
                if "status" in step:
                    headers = {}
                    if step.get("retry_after") is not None:
                        headers["Retry-After"] = str(step["retry_after"])
                    if step.get("retry_after_date") is not None:
                        headers["Retry-After"] = formatdate(time.time() + float(step["retry_after_date"]), usegmt=True)
                    if step.get("retry_after_ms") is not None:
                        headers["retry-after-ms"] = str(step["retry_after_ms"])
                    message = step.get("message", f"scripted status {step['status']}")
                    self._error(step["status"], message, type_=step.get("type"), code=step.get("code"),
                                headers=headers, step=step)
                    reply.update(status=step["status"], outcome="truncated" if cut else "error")
                    return
                if "raw" in step:
                    self._send(200, step["raw"].encode(), step=step)
                    reply.update(status=200, outcome="truncated" if cut else "malformed")
                    return
                n = int(body.get("n") or 1)
                if step.get("empty_choices"):
                    choices = []
                elif step.get("empty_content"):
                    choices = [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]
                else:
                    texts = step.get("texts") or [step.get("text", "")] * n
                    choices = [
                        {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                        for i, t in enumerate(texts)
                    ]
                data = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake-model"),
                    "choices": choices,
                    "usage": {
                        "prompt_tokens": step.get("prompt_tokens", 10),
                        "completion_tokens": step.get("completion_tokens", 5),
                        "total_tokens": step.get("prompt_tokens", 10) + step.get("completion_tokens", 5),
                    },
                }
                good = any(c["message"]["content"].strip() for c in choices)
                reply.update(status=200, outcome="ok" if good else "empty",
                             usage=(data["usage"]["prompt_tokens"], data["usage"]["completion_tokens"]))
                if good:  # counted before the client can see the reply, so a test never reads it stale
                    with server._lock:
                        server.answered += 1
                if not self._send(200, json.dumps(data).encode(), step=step):
                    reply.update(outcome="truncated" if cut else "abandoned", usage=None)
                    if good:
                        with server._lock:
                            server.answered -= 1

        return Handler
