"""The graph page's view in headless Chromium: `fit` shows the whole graph (width and height), the first view of a
graph shows it from its top with nothing cut off on the left (silero VAD's bodies are wider than the window), and a
model that cannot be read says so instead of staying on "laying out…"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphlsp.cli import main
from tests.conftest import shared
from tests.graphview.browser import STATUS_TIMEOUT_MS, Page


@pytest.fixture
def small(browser: Any) -> Iterator[Page]:
    """A window of an editor's side panel, narrower than the graphs."""
    p = Page(browser, 1000, 700)
    yield p
    p.close()


def _page(model: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"{model.stem}.html"
    assert main(["graph", str(model), "-o", str(out)]) == 0
    return out


def _rects(tab: Page) -> tuple[dict[str, float], dict[str, float]]:
    """The drawing's box on the screen and the part of the window it is drawn in (left of the side panel)."""
    drawn = tab.page.evaluate("(() => { const r = document.getElementById('layer').getBoundingClientRect();"
                              " return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })()")
    room = tab.page.evaluate("(() => { const r = document.getElementById('graph').getBoundingClientRect();"
                             " const p = document.getElementById('panel');"
                             " const right = p.hidden ? r.right : p.getBoundingClientRect().left;"
                             " return {left: r.left, top: r.top, right, bottom: r.bottom}; })()")  # fmt: skip
    return drawn, room


def _laid_out(tab: Page, after: int) -> dict[str, Any]:
    """The page's status once more than `after` layouts are done, polled from here (the page's CSP refuses the
    script playwright's wait_for_function would evaluate in it)."""
    deadline = time.monotonic() + STATUS_TIMEOUT_MS / 1000
    while tab.layouts() <= after and time.monotonic() < deadline:
        time.sleep(0.05)
    status = tab.status()
    assert status is not None and status["layouts"] > after and "error" not in status, status
    return status


def _open(tab: Page, page: Path) -> None:
    tab.page.goto(page.resolve().as_uri())
    _laid_out(tab, 0)


def _open_body(tab: Page) -> None:
    """Open the else branch of silero VAD's If (113 nodes, 2877 x 5224 laid out)."""
    tab.page.locator('[data-node="2"]').click()
    before = tab.layouts()
    tab.page.locator("#panel .open-body").first.click()
    assert _laid_out(tab, before)["graph"] == "If_0.else_branch"


def test_the_first_view_starts_at_the_top_with_nothing_cut_off_on_the_left(small: Page, tmp_path: Path) -> None:
    _open(small, _page(shared("realworld", "silero_vad_16k_op15.onnx"), tmp_path))
    drawn, room = _rects(small)
    assert drawn["left"] >= room["left"] and drawn["top"] >= room["top"], (drawn, room)
    assert drawn["top"] <= room["top"] + 20  # from the top
    _open(small, _page(shared("realworld", "silero_vad.onnx"), tmp_path))
    _open_body(small)
    drawn, room = _rects(small)
    assert drawn["left"] >= room["left"] and room["top"] <= drawn["top"] <= room["top"] + 20, (drawn, room)
    small.page.screenshot(path=str(tmp_path / "first_view.png"))
    assert small.errors == []


def test_fit_shows_the_whole_graph(small: Page, tmp_path: Path) -> None:
    _open(small, _page(shared("realworld", "silero_vad.onnx"), tmp_path))
    _open_body(small)
    small.page.locator("#fit").click()
    drawn, room = _rects(small)
    for side in ("left", "top"):
        assert drawn[side] >= room[side] - 0.5, (side, drawn, room)
    for side in ("right", "bottom"):
        assert drawn[side] <= room[side] + 0.5, (side, drawn, room)
    assert drawn["bottom"] - drawn["top"] > (room["bottom"] - room["top"]) * 0.8  # as large as it fits
    small.page.screenshot(path=str(tmp_path / "fit.png"))
    assert small.errors == []


@pytest.mark.parametrize("data", [b"", b"\x08\x07\x12\xff\xff"], ids=["empty", "corrupt"])
def test_a_model_that_cannot_be_read_says_so(small: Page, tmp_path: Path, data: bytes) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(data)
    _open(small, _page(model, tmp_path))
    assert "laying out" not in small.page.inner_text("#stats")
    assert small.page.is_visible("#error") and "could not be read" in small.page.inner_text("#error")
    assert "GL106 cannot load binary ONNX model" in small.page.inner_text("#model-problems")
    assert small.errors == []
