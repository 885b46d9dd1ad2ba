"""Headless Chromium (Debian's `chromium`, driven by playwright) for the graph page tests.

Outside CI a machine without chromium skips these tests with the reason; under CI=true they never skip (`.ci/run`
installs chromium first). Playwright's own browser downloads are never used.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("GRAPHLSP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
STATUS_TIMEOUT_MS = 60_000  # a generous bound for a loaded machine; speed budgets live in bench/graph.py


def launch() -> Iterator[Any]:
    """A browser for a module's tests (a generator for a fixture)."""
    missing = not Path(CHROMIUM).exists()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None  # type: ignore[assignment]
    if missing or sync_playwright is None:
        why = "chromium is not installed (apt-get install chromium)" if missing else "playwright is not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}: under CI the graph page tests must run")
        pytest.skip(why)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Page:
    """One tab with its page errors and console errors collected."""

    def __init__(self, browser: Any, width: int = 1400, height: int = 900, bypass_csp: bool = False) -> None:
        # the pages run under their Content-Security-Policy (the waits poll from the test: the policy allows no
        # eval); `bypass_csp` for a probe that needs one
        self.page = browser.new_page(viewport={"width": width, "height": height}, bypass_csp=bypass_csp)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))

    def open(self, path: Path) -> dict[str, Any]:
        self.page.goto(path.resolve().as_uri())
        return self.wait(0)

    def layouts(self) -> int:
        s = self.status()
        return int(s["layouts"]) if s else 0

    def status(self) -> dict[str, Any] | None:
        raw = self.page.evaluate("document.body.dataset.graphlspStatus || null")
        return json.loads(raw) if raw else None

    def wait(self, after: int) -> dict[str, Any]:
        """The status once more than `after` layouts are done."""
        # polled from here: playwright's wait_for_function evaluates a string, which the page's CSP (no eval) blocks
        deadline = time.monotonic() + STATUS_TIMEOUT_MS / 1000
        status = self.status()
        while (status is None or (status.get("layouts", 0) <= after and "error" not in status)) \
                and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)
            status = self.status()
        assert status is not None
        assert "error" not in status, status
        assert status.get("layouts", 0) > after, f"no layout past {after}: {status}"
        return status

    def until(self, expression: str) -> Any:
        """Poll a page expression (evaluated over the protocol, which the page's CSP allows) until it is truthy."""
        deadline = time.monotonic() + STATUS_TIMEOUT_MS / 1000
        value = self.page.evaluate(expression)
        while not value and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)
            value = self.page.evaluate(expression)
        assert value, f"{expression} stayed false"
        return value

    def close(self) -> None:
        self.page.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for a module's tests (a conftest imports this fixture and `tab`)."""
    yield from launch()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    """A fresh tab for each test."""
    p = Page(browser)
    yield p
    p.close()
