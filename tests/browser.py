"""A real headless browser for the tests: Debian's ``chromium``, driven over the Chrome DevTools Protocol.

:func:`headless_chromium` starts the browser on a private profile with its DevTools endpoint on 127.0.0.1 (a
free port the browser picks and writes to ``DevToolsActivePort``); :class:`Page` connects to its first tab
over a WebSocket (``websocket-client``), records every console message, uncaught exception, log entry
(Content-Security-Policy refusals land there) and network request, and can evaluate JavaScript, resize the
viewport and take a screenshot. Nothing here is a stand-in: what the page does is what Chromium did.
"""

from __future__ import annotations

import base64
import json
import shutil
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket
from servers import running

CHROMIUM = "chromium"


def chromium_binary() -> str:
    """The browser; in CI (``CI`` set by ``make test``) a missing one fails the test instead of skipping."""
    import os

    import pytest

    found = shutil.which(CHROMIUM)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: `make test` installs it (Debian package chromium)")
        pytest.skip("chromium is not installed (make test installs it)")
    return found


@dataclass
class Page:
    """One browser tab over the DevTools Protocol, with what it has seen since it was opened."""

    socket: websocket.WebSocket
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    _next: int = 0
    _urls: dict[str, str] = field(default_factory=dict)

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """Send a command; return its result (recording the events that arrive meanwhile)."""
        self._next += 1
        ident = self._next
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self._receive(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result") or {})
        raise TimeoutError(f"{method}: no answer in {timeout} s")

    def _receive(self, deadline: float) -> dict[str, Any]:
        self.socket.settimeout(max(deadline - time.monotonic(), 0.1))
        message = json.loads(self.socket.recv())
        method, params = message.get("method"), message.get("params") or {}
        if method == "Runtime.consoleAPICalled":
            self.console.append(params)
        elif method == "Runtime.exceptionThrown":
            self.exceptions.append(params)
        elif method == "Log.entryAdded":
            self.log.append(params.get("entry") or {})
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
            self._urls[params["requestId"]] = params["request"]["url"]
        elif method == "Network.loadingFailed" and params.get("blockedReason"):
            self.blocked.append(self._urls.get(params["requestId"], "?"))
        elif method == "Page.loadEventFired":
            self._loaded = True
        return dict(message)

    def open(self, url: str, timeout: float = 60) -> float:
        """Navigate to ``url`` and wait for its load event; the seconds it took."""
        self._loaded = False
        started = time.monotonic()
        self.call("Page.navigate", url=url)
        deadline = started + timeout
        while not self._loaded:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load in {timeout} s")
            self._receive(deadline)
        return time.monotonic() - started

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=mobile)  # fmt: skip

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    @property
    def fetched(self) -> list[str]:
        """The requests the browser made and did not block (every one it tried: :attr:`requests`)."""
        return [url for url in self.requests if url not in self.blocked]

    def errors(self) -> list[str]:
        """Every console error, uncaught exception and error log entry, as text."""
        out = [json.dumps(c.get("args")) for c in self.console if c.get("type") in ("error", "assert")]
        out += [json.dumps(e.get("exceptionDetails")) for e in self.exceptions]
        out += [
            f"{e.get('source')}: {e.get('text')} {e.get('url', '')}"
            for e in self.log
            if e.get("level") == "error"
        ]
        return out


@contextmanager
def headless_chromium(profile: Path) -> Iterator[Page]:
    """A headless Chromium on a fresh profile under ``profile``, one tab open; closed on exit."""
    profile.mkdir(parents=True, exist_ok=True)
    command = [
        chromium_binary(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank",
    ]  # fmt: skip
    log = profile / "chromium.log"
    with running(command, log) as process:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            tabs = [t for t in json.load(answer) if t.get("type") == "page"]
        ws = websocket.create_connection(tabs[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        page = Page(ws)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        try:
            yield page
        finally:
            ws.close()
