"""A minimal Chrome DevTools Protocol driver for the system Chromium (no browser download).

Starts `chromium --headless` with a fresh profile, finds its debugging port in
the profile's DevToolsActivePort file, and talks to the first page target over
its websocket: navigate, evaluate JavaScript, type, take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

BINARIES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-port=0", "--remote-allow-origins=*", "--window-size=1600,1100",
)
START_TIMEOUT_S = 60.0


class CDPError(RuntimeError):
    pass


def find_chromium() -> str | None:
    return next((found for name in BINARIES if (found := shutil.which(name))), None)


class Chromium:
    def __init__(self, binary: str, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.log = profile.parent / "chromium.log"
        self._log_fh = self.log.open("wb")
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=self._log_fh, stderr=subprocess.STDOUT,
        )
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        try:
            port = self._wait_port(profile / "DevToolsActivePort")
            self.ws = websocket.create_connection(self._page_socket(port), timeout=30, suppress_origin=True)
            self.call("Page.enable")
            self.call("Runtime.enable")
        except BaseException:
            self.close()
            raise

    def _wait_port(self, marker: Path) -> int:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CDPError(f"chromium exited with {self.proc.returncode}; see {self.log}")
            try:
                first = marker.read_text().splitlines()[0]
                return int(first)
            except (OSError, IndexError, ValueError):
                time.sleep(0.1)
        raise CDPError(f"chromium did not open a debugging port in {START_TIMEOUT_S:.0f}s; see {self.log}")

    @staticmethod
    def _page_socket(port: int) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        pages = [t for t in targets if t.get("type") == "page"]
        if not pages:
            raise CDPError("chromium has no page target")
        return pages[0]["webSocketDebuggerUrl"]

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        self.ws.send(json.dumps({"id": self._next_id, "method": method, "params": params or {}}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._next_id:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self._events.append(msg)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        for i, ev in enumerate(self._events):
            if ev["method"] == method:
                return self._events.pop(i)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self._events.append(msg)
        raise CDPError(f"no {method} within {timeout}s")

    def navigate(self, url: str) -> None:
        self._events.clear()
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"navigate {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired")

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise CDPError(f"JS error in {expression[:80]!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        """Focus, clear, and type as a user would (the page sees real input events)."""
        self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.focus(); e.select(); }})()")
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Backspace", "code": "Backspace",
                                             "windowsVirtualKeyCode": 8})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Backspace", "code": "Backspace",
                                             "windowsVirtualKeyCode": 8})
        if text:
            self.call("Input.insertText", {"text": text})

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            with contextlib.suppress(Exception):  # already gone; reaped below either way
                self.call("Browser.close")
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log_fh.close()
