"""`graphlsp diff --format html` in headless Chromium: the new model drawn with its changes coloured, the removed
nodes drawn where they were, a legend, and a list that steps from change to change."""

from __future__ import annotations

import json
import time
from pathlib import Path

import onnx
import pytest

from graphlsp.cli import main
from tests.conftest import ROOT
from tests.graphview.browser import Page

CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"


def wait_layout(tab: Page, before: int) -> None:
    """Until a layout after the `before`th is done, polled from here: the page's Content-Security-Policy refuses
    the string predicates playwright's wait_for_function evaluates in the page."""
    deadline = time.monotonic() + 60
    while tab.layouts() <= before:
        assert time.monotonic() < deadline, "no new layout within 60 s"
        time.sleep(0.05)


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
    wait_layout(tab, before)
    assert tab.page.evaluate("document.querySelector('.node.selected text.name').textContent") == "node_relu"
    before = tab.layouts()
    tab.page.click("#diff button:has-text('next')")
    wait_layout(tab, before)
    assert tab.page.evaluate("document.querySelector('.node.selected text.name').textContent") == "added_neg"
    # the removed Relu is joined to what fed it: an edge from the Conv's output
    assert "Softmax" in tab.page.inner_text("#diff ol") or "node_softmax" in tab.page.inner_text("#diff ol")
    assert tab.errors == []


def test_a_collapsed_group_with_a_change_is_marked(tab: Page, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """On a model large enough for collapsed groups (BERT, 208 nodes), the group that holds the change is marked and
    no other is; stepping to the change opens it."""
    source = ROOT / "corpus" / "models" / "optimum_bert.onnx"
    m = onnx.load(str(source))
    node = next(n for n in m.graph.node if n.name == "/encoder/layer.1/attention/self/query/MatMul")
    node.name += "_renamed"  # the same scope: inside the collapsed group of the query projection
    new = tmp_path / "bert.onnx"
    onnx.save(m, str(new))
    out = tmp_path / "d.html"
    assert main(["diff", str(source), str(new), "--format", "html", "-o", str(out)]) == 1
    capsys.readouterr()
    status = tab.open(out)
    assert status["groups"] > 0
    marked = tab.page.evaluate("[...document.querySelectorAll('.group.diff-group')].map((g) => g.dataset.group)")
    groups = tab.page.evaluate("document.querySelectorAll('.group').length")
    assert marked == ["/encoder/layer.1/attention/self/query"] and groups > 1
    before = tab.layouts()
    tab.page.click("#diff button:has-text('next')")
    wait_layout(tab, before)
    assert tab.page.evaluate("document.querySelector('#panel .nm').textContent") == node.name  # the name in full
    assert tab.page.evaluate("document.querySelectorAll('.node.selected.diff-renamed').length") == 1
    assert tab.errors == []
