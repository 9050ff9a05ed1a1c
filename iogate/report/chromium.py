"""Headless Chromium driven over the DevTools protocol on a pipe (no extra packages).

Used to check that a built report really renders: Allure 3 is a single-page
app, so fetching files proves nothing; the page has to run. `--remote-debugging-pipe`
makes Chromium speak CDP on fds 3 (commands in) and 4 (replies out), NUL-framed
JSON, so no port is opened and no websocket client is needed.

Networking is pinned to loopback: every host name but 127.0.0.1 resolves to
nothing, so a page can never reach outside the machine.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from iogate.errors import IOGateError

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


class BrowserError(IOGateError):
    """Chromium did not start, died, or a DevTools command failed or timed out."""


class Chromium:
    """One headless Chromium with one page.

    >>> with Chromium() as browser:
    ...     browser.navigate("http://127.0.0.1:8000/index.html")
    ...     browser.wait_for("document.title")
    """

    def __init__(self, executable: str | None = None, *, window: tuple[int, int] = (1400, 1000), command_timeout_s: float = 30.0):
        found = executable or shutil.which("chromium") or shutil.which("chromium-browser")
        if not found:
            raise BrowserError("chromium not found on PATH (apt-get install chromium)")
        self._timeout_s = command_timeout_s
        self._profile = tempfile.mkdtemp(prefix="iogate-chromium-")
        # Parent ends live at fd >= 10 so the child's dup2 onto 3 and 4 cannot clobber one another.
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def wire_pipe() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        argv = [found, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", f"--window-size={window[0]},{window[1]}",
                "--remote-debugging-pipe", "about:blank"]
        try:
            self._process = subprocess.Popen(argv, pass_fds=(3, 4), preexec_fn=wire_pipe,
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            os.close(child_in)
            os.close(child_out)
        self._write_fd = to_browser_w
        self._read_fd = from_browser_r
        self._buffer = b""
        self._next_id = 0
        self._session: str | None = None
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
            self._session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
            self.send("Page.enable")
            self.send("Runtime.enable")
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True) -> dict[str, Any]:
        """One CDP command; returns its result, skipping the events that arrive meanwhile."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self._session:
            message["sessionId"] = self._session
        os.write(self._write_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self._timeout_s
        while True:
            reply = self._read_message(deadline, method)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"chromium: {method} failed: {reply['error']}")
                return reply.get("result", {})

    def _read_message(self, deadline: float, method: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrowserError(f"chromium: no reply to {method} within {self._timeout_s:.0f} s")
            readable, _, _ = select.select([self._read_fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(self._read_fd, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium exited (code {self._process.poll()}) while waiting for {method}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        """Evaluate JavaScript in the page (promises awaited); returns the JSON value."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"chromium: script raised: {result['exceptionDetails'].get('text')} in {expression[:120]!r}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 20.0, poll_s: float = 0.1) -> Any:
        """Poll `expression` until it is truthy; returns that value.

        While a page loads, `document.body` may not exist yet: an exception counts as "not yet".
        """
        guarded = f"(() => {{ try {{ return ({expression}); }} catch (error) {{ return null; }} }})()"
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(guarded)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium: still false after {timeout_s:.0f} s: {expression.strip()[:200]}")
            time.sleep(poll_s)

    def screenshot(self, path: Path | str) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})["data"]
        target = Path(path)
        target.write_bytes(base64.b64decode(data))
        return target

    def close(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            try:
                os.write(self._write_fd, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait(timeout=10)
        for fd_name in ("_write_fd", "_read_fd"):
            fd = getattr(self, fd_name, None)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, fd_name, None)
        shutil.rmtree(self._profile, ignore_errors=True)
