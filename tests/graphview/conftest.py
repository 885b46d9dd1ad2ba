"""The graph page tests' browser: one headless Chromium a module, a fresh tab a test (tests/graphview/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.graphview.browser import Page, launch


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    yield p
    p.close()
