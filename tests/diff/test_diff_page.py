"""`graphlsp diff --format html` in headless Chromium: the new model drawn with its changes coloured, the removed
nodes drawn where they were, a legend, and a list that steps from change to change."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest

from graphlsp.cli import main
from tests.conftest import ROOT
from tests.graphview.browser import Page, launch

CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    yield p
    p.close()


def edited(tmp_path: Path) -> Path:
    """The CNN with its Softmax's axis changed, its Relu removed and a Neg added before the output."""
    m = onnx.load(str(CNN))
    g = m.graph
    next(a for a in next(n for n in g.node if n.op_type == "Softmax").attribute if a.name == "axis").i = 1
    relu = next(n for n in g.node if n.op_type == "Relu")
    for n in g.node:
        n.input[:] = [relu.input[0] if x == relu.output[0] else x for x in n.input]
    g.node.remove(relu)
    last = g.node[-1]
    last.output[0] = "before_neg"
    g.node.append(onnx.helper.make_node("Neg", ["before_neg"], [g.output[0].name], name="added_neg"))
    path = tmp_path / "edited.onnx"
    onnx.save(m, str(path))
    return path


def test_page_colours_changes_and_steps_through_them(tab: Page, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    new = edited(tmp_path)
    out = tmp_path / "d.html"
    assert main(["diff", str(CNN), str(new), "--format", "html", "-o", str(out)]) == 1
    capsys.readouterr()
    tab.open(out)
    counts = json.loads(tab.page.evaluate("document.body.dataset.graphlspDiff"))
    assert counts == {"removed": 1, "added": 1, "changed": 2}  # the Softmax, and the MaxPool that reads the Conv now
    drawn = tab.page.evaluate("""() => ['added', 'removed', 'changed'].map((k) =>
        [...document.querySelectorAll('.node.diff-' + k + ' text.name')].map((e) => e.textContent))""")
    assert drawn[0] == ["added_neg"] and drawn[1] == ["node_relu"] and len(drawn[2]) == 2
    colours = tab.page.evaluate("""() => ['added', 'removed', 'changed'].map((k) =>
        getComputedStyle(document.querySelector('.node.diff-' + k + ' rect')).stroke)""")
    assert len(set(colours)) == 3, colours  # three colours, and the legend says which is which
    legend = tab.page.inner_text("#diff .legend")
    assert "added 1" in legend and "removed 1" in legend and "changed 2" in legend
    # stepping: the first change is the removed Relu, then the added Neg; each is selected on the graph
    before = tab.layouts()
    tab.page.click("#diff button:has-text('next')")
    tab.wait(before)
    assert tab.page.evaluate("document.querySelector('.node.selected text.name').textContent") == "node_relu"
    before = tab.layouts()
    tab.page.click("#diff button:has-text('next')")
    tab.wait(before)
    assert tab.page.evaluate("document.querySelector('.node.selected text.name').textContent") == "added_neg"
    # the removed Relu is joined to what fed it: an edge from the Conv's output
    assert "Softmax" in tab.page.inner_text("#diff ol") or "node_softmax" in tab.page.inner_text("#diff ol")
    assert tab.errors == []
