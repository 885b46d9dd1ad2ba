"""The graph page as VS Code's webview runs it (headless Chromium, `acquireVsCodeApi` recorded): a click on a node
posts `reveal` with its line, a `cursor` message highlights the node written on that line, a `graph` message after
an edit redraws with the new graph and keeps the groups the user opened, and a page without data asks for one.
The extension's side of these messages: editors/vscode/test/graph.test.ts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphlsp.graphview import graph_json
from graphlsp.graphview.page import page as page_html
from graphlsp.lint.config import Settings
from graphlsp.lint.runner import lint_text
from tests.graphview.browser import Page

ROOT = Path(__file__).resolve().parents[2]
FAKE_VSCODE = """
window.__posted = [];
window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
                                   getState: () => undefined, setState: () => undefined });
"""


@pytest.fixture
def webview(browser: Any) -> Iterator[Page]:
    p = Page(browser)
    p.page.add_init_script(FAKE_VSCODE)
    yield p
    p.close()


def data_of(text: str, name: str) -> dict[str, Any]:
    a, diags = lint_text(text, name, Settings())
    return graph_json(a.model, a.refiner, a.fold_plan(), diags, name)


def posted(p: Page) -> list[dict[str, Any]]:
    return p.page.evaluate("window.__posted")


def test_reveal_cursor_and_update(webview: Page, tmp_path: Path) -> None:
    text = (ROOT / "examples" / "mlp.onnxtxt").read_text(encoding="utf-8")
    data = data_of(text, "mlp.onnxtxt")
    html = tmp_path / "webview.html"
    html.write_text(page_html(data), encoding="utf-8")
    status = webview.open(html)
    nodes = data["graph"]["nodes"]
    assert status["nodes"] == len(nodes)

    # a click on a node: reveal its line in the document
    relu = next(i for i, n in enumerate(nodes) if n["op"] == "Relu")
    webview.page.locator(f'[data-node="{relu}"]').click()
    reveals = [m for m in posted(webview) if m["type"] == "reveal"]
    assert reveals and reveals[-1]["line"] == nodes[relu]["line"] == text.splitlines().index("  h = Relu (h_pre)")

    # the cursor on a node's line: that node is highlighted
    softmax = next(i for i, n in enumerate(nodes) if n["op"] == "Softmax")
    webview.page.evaluate("line => window.postMessage({type: 'cursor', line}, '*')", nodes[softmax]["line"])
    webview.page.wait_for_selector(f'[data-node="{softmax}"].cursor')
    assert webview.page.locator(".cursor").count() == 1
    assert webview.page.evaluate("document.body.dataset.graphlspCursor") == str(softmax)

    # an edit: a new node; the page draws the new graph
    edited = text.replace("  probs = Softmax", "  extra = Neg (logits)\n  probs = Softmax")
    new = data_of(edited, "mlp.onnxtxt")
    before = webview.layouts()
    webview.page.evaluate("d => window.postMessage({type: 'graph', data: d}, '*')", new)
    status = webview.wait(before)
    assert status["nodes"] == len(nodes) + 1
    extra = next(i for i, n in enumerate(new["graph"]["nodes"]) if n["outputs"] == ["extra"])
    assert webview.page.locator(f'[data-node="{extra}"]').count() == 1
    assert status["labelledEdges"] == status["edges"]
    assert webview.errors == []


def test_update_keeps_opened_groups_and_shell_asks_for_a_graph(webview: Page, tmp_path: Path) -> None:
    model = ROOT.parent / "shared" / "realworld" / "ch_PP-OCRv4_rec_infer.onnx"
    if not model.exists():
        pytest.skip(f"{model} is not here")
    from graphlsp.graphview import file_graph

    data = file_graph(str(model), Settings())
    shell = tmp_path / "shell.html"
    shell.write_text(page_html(None), encoding="utf-8")
    webview.page.goto(shell.as_uri())
    webview.until("window.__posted.length > 0")
    assert posted(webview) == [{"type": "ready"}]  # the extension answers with the graph
    webview.page.evaluate("d => window.postMessage({type: 'graph', data: d}, '*')", data)
    status = webview.wait(0)
    before = webview.layouts()
    webview.page.locator(".group").first.click()
    opened = webview.wait(before)
    assert opened["visibleNodes"] > status["visibleNodes"]
    before = webview.layouts()
    webview.page.evaluate("d => window.postMessage({type: 'graph', data: d}, '*')", json.loads(json.dumps(data)))
    again = webview.wait(before)
    assert again["visibleNodes"] == opened["visibleNodes"] and again["groups"] == opened["groups"]
    assert webview.errors == []
