"""The graph page tests' browser: one headless Chromium a module, a fresh tab a test (tests/graphview/browser.py)."""

from __future__ import annotations

from tests.graphview.browser import browser, tab  # noqa: F401  # fixtures
