"""Open a local HTML file in headless Chromium over the DevTools protocol: screenshot, DOM facts, console errors.

Used by the report tests.  Needs a Chromium binary (``$CHROMIUM``, else ``chromium``,
``chromium-browser``, ``google-chrome`` on the PATH; on Debian/Ubuntu ``apt-get install chromium``)
and tornado (a dependency of ``distributed``, in the test extra) for the WebSocket.  Chromium
runs with a fresh profile and no network activity of its own.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

__all__ = ["find_chromium", "inspect_page"]

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
          "--hide-scrollbars", "--remote-debugging-port=0"]

#: Evaluated in the page once it has loaded.
_FACTS = """JSON.stringify({
  tables: document.querySelectorAll('table').length,
  rows: document.querySelectorAll('tbody tr').length,
  images: Array.from(document.images).map(i => ({complete: i.complete, width: i.naturalWidth,
                                                height: i.naturalHeight})),
  scripts: document.querySelectorAll('script').length,
  title: document.title,
  text: document.body.innerText
})"""


def find_chromium() -> str | None:
    """Path of a Chromium binary, or None."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).exists():
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def inspect_page(html_path, screenshot_path, *, width: int = 1280, height: int = 2400, timeout: float = 60.0,
                 probe: str | None = None) -> dict:
    """Load ``html_path`` in headless Chromium; save a full-page PNG; return what the page holds.

    Returns
    -------
    dict
        ``tables``, ``rows``, ``images`` (complete, natural width and height of each), ``scripts``,
        ``title``, ``text`` (the visible text), ``console_errors`` (console messages of level
        error, uncaught exceptions and log entries of level error), ``screenshot`` (the path), and
        ``probe``: the value of the JavaScript expression ``probe`` (a JSON string it returns, parsed;
        None without one).
    """
    from tornado.ioloop import IOLoop

    binary = find_chromium()
    if binary is None:
        raise RuntimeError("no Chromium binary found")
    profile = tempfile.mkdtemp(prefix="algorank-chromium-")
    proc = subprocess.Popen([binary, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        ws_url = pages[0]["webSocketDebuggerUrl"]
        url = Path(html_path).resolve().as_uri()
        return IOLoop().run_sync(lambda: _session(ws_url, url, screenshot_path, width, probe), timeout=timeout)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


async def _session(ws_url: str, url: str, screenshot_path, width: int, probe: str | None = None) -> dict:
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(ws_url, max_message_size=256 * 1024 * 1024)
    state = {"id": 0}
    errors: list[str] = []
    events: list[str] = []

    async def call(method, params=None):
        state["id"] += 1
        mid = state["id"]
        conn.write_message(json.dumps({"id": mid, "method": method, "params": params or {}}))
        while True:
            msg = await conn.read_message()
            if msg is None:
                raise RuntimeError("DevTools connection closed")
            data = json.loads(msg)
            _collect(data, errors, events)
            if data.get("id") == mid:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data.get("result", {})

    for domain in ("Page", "Runtime", "Log"):
        await call(f"{domain}.enable")
    await call("Page.navigate", {"url": url})
    while "Page.loadEventFired" not in events:
        msg = await conn.read_message()
        if msg is None:
            raise RuntimeError("DevTools connection closed")
        _collect(json.loads(msg), errors, events)
    facts = json.loads((await call("Runtime.evaluate", {"expression": _FACTS, "returnByValue": True}))["result"]["value"])
    facts["probe"] = None
    if probe is not None:
        value = (await call("Runtime.evaluate", {"expression": probe, "returnByValue": True}))["result"]["value"]
        facts["probe"] = json.loads(value)
    metrics = await call("Page.getLayoutMetrics")
    size = metrics.get("cssContentSize") or metrics.get("contentSize")
    shot = await call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                 "clip": {"x": 0, "y": 0, "width": width,
                                                          "height": min(float(size["height"]), 16000.0), "scale": 1}})
    Path(screenshot_path).write_bytes(base64.b64decode(shot["data"]))
    conn.close()
    facts["console_errors"] = errors
    facts["screenshot"] = str(screenshot_path)
    return facts


def _collect(data: dict, errors: list, events: list) -> None:
    method = data.get("method")
    if not method:
        return
    events.append(method)
    params = data.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
    elif method == "Runtime.exceptionThrown":
        errors.append(str(params.get("exceptionDetails", {}).get("text", "exception")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        errors.append(str(params["entry"].get("text", "")))
