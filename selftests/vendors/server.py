"""An in-process HTTPS server that plays a vendor array for the contract tests.

It listens on 127.0.0.1 (self-signed certificate, handed to the driver as its
CA bundle), passes each request to a fake array app (state: volumes, hosts,
mappings...), and checks every request and every response against the
vendor's published description (a Contract). Violations are collected; the
test fixture fails the test when there are any. Faults (a status, a delay
longer than the client's timeout, an expired session) are injected per call.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, Self
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # parsed JSON, or None


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class Contract(Protocol):
    def check_request(self, request: Request) -> list[str]: ...

    def check_response(self, request: Request, reply: Reply) -> list[str]: ...


App = Callable[[Request], Reply]


@dataclass
class Fault:
    """Answer matching requests with `status` (or hang `delay_s` first) `times` times."""

    method: str
    path_regex: str
    status: int | None = None
    delay_s: float = 0.0
    times: int = 1
    after_app: bool = False  # run the app first (the array did it) and then fail the answer
    hang: bool = False  # never answer (until the server stops): a timeout without a wall-clock race

    def matches(self, request: Request) -> bool:
        return self.times > 0 and request.method == self.method and re.search(self.path_regex, request.path) is not None


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (the driver trusts it as its CA bundle)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


class ContractServer:
    def __init__(self, app: App, contract: Contract, directory: Path) -> None:
        self.app = app
        self.contract = contract
        self.cert, key = make_certificate(directory)
        self.faults: list[Fault] = []
        self.violations: list[str] = []
        self.log: list[tuple[Request, Reply]] = []
        self.hung: list[Request] = []
        self._lock = threading.Lock()
        self.released = threading.Event()  # lets hanging requests go when the server stops
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the test reads server.log
                pass

            def _handle(self) -> None:
                server.handle(self)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def inject(self, fault: Fault) -> Fault:
        self.faults.append(fault)
        return fault

    def calls(self) -> list[str]:
        """Every request answered, then every request left hanging (a timeout fault)."""
        return [f"{r.method} {r.path}" for r, _ in self.log] + [f"{r.method} {r.path}" for r in self.hung]

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        request = Request(handler.command, split.path, parse_qs(split.query, keep_blank_values=True), dict(handler.headers.items()), body)
        with self._lock:
            fault = next((f for f in self.faults if f.matches(request)), None)
            if fault:
                fault.times -= 1
            self.violations.extend(f"{request.method} {request.path}: {v}" for v in self.contract.check_request(request))
        if fault and fault.hang:
            with self._lock:
                self.hung.append(request)  # asked, never answered: counted by calls(), not in log
            self.released.wait()
            return
        if fault and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault and fault.status and not fault.after_app:
            reply = Reply(fault.status, {"errors": [{"message": "injected fault"}]})
        else:
            with self._lock:
                try:
                    reply = self.app(request)
                except Exception as exc:
                    self.violations.append(f"{request.method} {request.path}: test server error {exc!r}")
                    reply = Reply(500, {"errors": [{"message": "test server error"}]})
                if not (fault and fault.status):
                    self.violations.extend(
                        f"{request.method} {request.path} -> {reply.status}: {v}" for v in self.contract.check_response(request, reply)
                    )
            if fault and fault.status:
                reply = Reply(fault.status, {"errors": [{"message": "injected fault"}]})
        with self._lock:
            self.log.append((request, reply))
        payload = b"" if reply.body is None else json.dumps(reply.body).encode()
        try:
            handler.send_response(reply.status)
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            if payload:
                handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass  # the client gave up (a timeout test)
