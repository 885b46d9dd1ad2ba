"""The graph page (`graphlsp graph`) in a real browser: headless Chromium opens the pages of the examples and of
real models, checks the status the page reports when its layout is done, clicks a group open and a node, searches,
opens subgraph bodies and functions, and saves screenshots (under pytest's tmp dir)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pytest

from graphlsp.cli import main
from graphlsp.graphview import file_graph
from graphlsp.graphview.page import page as page_html
from graphlsp.lint.config import Settings
from tests.graphview.browser import Page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.onnxtxt"))
SHARED = ROOT.parent / "shared"
REALWORLD = sorted((SHARED / "realworld").glob("*.onnx"))
CORPUS = sorted((ROOT / "corpus" / "models").glob("*.onnx"))
GPT_L96 = SHARED / "bench" / "gpt_L96.onnxtxt"
MAKE_BIG = SHARED / "tools" / "make_big_model.py"


def write_page(model: Path, out: Path) -> Path:
    """`graphlsp graph MODEL -o OUT` (in this process)."""
    assert main(["graph", str(model), "-o", str(out)]) == 0
    return out


def graph_data(model: Path) -> dict[str, Any]:
    return file_graph(str(model), Settings())


def check_status(status: dict[str, Any], data: dict[str, Any]) -> None:
    assert status["nodes"] == len(data["graph"]["nodes"])
    assert status["edges"] > 0
    if "?" in data["graph"]["types"].values():  # a value of unknown type: its line says `?`
        assert 0 < status["labelledEdges"] <= status["edges"]
    else:
        assert status["labelledEdges"] == status["edges"]
    assert status["visibleNodes"] + status["groups"] > 0
    assert status["visibleNodes"] <= status["nodes"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_page(example: Path, tab: Page, tmp_path: Path) -> None:
    status = tab.open(write_page(example, tmp_path / "g.html"))
    data = graph_data(example)
    check_status(status, data)
    if status["nodes"] < 250:  # small graphs are drawn whole
        assert status["visibleNodes"] == status["nodes"]
    # every label drawn is a type the analysis inferred for some value
    labels = tab.page.eval_on_selector_all("text.label", "els => els.map(e => e.firstChild.textContent)")
    types = set(data["graph"]["types"].values())
    assert len(labels) == status["edges"]
    assert status["labelledEdges"] == sum(1 for label in labels if not re.match(r"^\?( \+\d+)?$", label))
    shown = {re.sub(r" \+\d+$", "", label) for label in labels}
    assert all(t in types or (t.endswith("\u2026") and any(x.startswith(t[:-1]) for x in types)) for t in shown), shown - types
    tab.page.screenshot(path=str(tmp_path / f"{example.stem}.png"))
    assert tab.errors == []


def test_problems_are_marked_on_their_nodes(tab: Page, tmp_path: Path) -> None:
    broken = ROOT / "examples" / "broken.onnxtxt"
    tab.open(write_page(broken, tmp_path / "g.html"))
    reported = subprocess.run([sys.executable, "-m", "graphlsp", "check", "--format", "json", "--no-cache",
                               str(broken)], capture_output=True, text=True)  # fmt: skip
    errors = [d for d in json.loads(reported.stdout) if d["severity"] == "error"]
    marked = tab.page.locator(".node.error")
    assert marked.count() > 0
    marked.first.click()
    panel = tab.page.locator("#panel").inner_text()
    # the node's problem as `graphlsp check` reports it, with its code and message
    assert any(d["code"] in panel and d["message"] in panel for d in errors), panel
    assert tab.errors == []


def test_group_opens_and_node_shows_types_and_hover(tab: Page, tmp_path: Path) -> None:
    model = SHARED / "realworld" / "ch_PP-OCRv4_det_infer.onnx"
    if not model.exists():
        pytest.skip(f"{model} is not here")
    status = tab.open(write_page(model, tmp_path / "g.html"))
    data = graph_data(model)
    check_status(status, data)
    assert status["groups"] > 0 and status["visibleNodes"] < status["nodes"]  # 672 nodes start grouped
    tab.page.screenshot(path=str(tmp_path / "collapsed.png"))
    before = tab.layouts()
    tab.page.locator(".group").first.click()
    opened = tab.wait(before)
    assert opened["visibleNodes"] + opened["groups"] > status["visibleNodes"] + status["groups"]
    assert opened["labelledEdges"] == opened["edges"]
    tab.page.screenshot(path=str(tmp_path / "opened.png"))
    group = tab.page.locator(".frame").first.get_attribute("data-group")
    assert group is not None  # the group opened is drawn as a frame, kept in sight
    index = tab.page.evaluate("""() => {
        const inside = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
        const n = [...document.querySelectorAll('.node')].find((e) => inside(e.getBoundingClientRect()));
        return n ? +n.dataset.node : -1; }""")
    assert index >= 0, "no node in sight after opening a group"
    tab.page.locator(f'[data-node="{index}"]').click()
    n = data["graph"]["nodes"][index]
    panel = tab.page.locator("#panel").inner_text()
    assert n["op"] in panel
    for value in n["inputs"] + n["outputs"]:
        if value:
            assert value in panel and data["graph"]["types"][value] in panel
    hover = data["hovers"][n["hover"]]
    assert "since version" in hover and "since version" in panel  # the op's hover, as the editor shows it
    assert tab.page.locator(".node.selected").count() == 1
    tab.page.screenshot(path=str(tmp_path / "clicked.png"))
    assert tab.errors == []


def test_search_reveals_a_node_inside_a_collapsed_group(tab: Page, tmp_path: Path) -> None:
    model = SHARED / "realworld" / "ch_PP-OCRv4_rec_infer.onnx"
    if not model.exists():
        pytest.skip(f"{model} is not here")
    tab.open(write_page(model, tmp_path / "g.html"))
    data = graph_data(model)
    drawn = {int(x) for x in tab.page.eval_on_selector_all("[data-node]", "els => els.map(e => e.dataset.node)")}
    hidden = next(i for i, n in enumerate(data["graph"]["nodes"]) if i not in drawn and n["outputs"][0])
    value = data["graph"]["nodes"][hidden]["outputs"][0]
    before = tab.layouts()
    tab.page.fill("#search", value)
    hits = tab.page.locator("#results .hit")
    assert hits.count() >= 1
    tab.page.press("#search", "Enter")
    tab.wait(before)
    tab.page.wait_for_selector(f'[data-node="{hidden}"].selected')
    assert value in tab.page.locator("#panel").inner_text()
    assert tab.errors == []


def test_if_bodies_and_function_calls_open(tab: Page, tmp_path: Path) -> None:
    tab.open(write_page(ROOT / "examples" / "if_branch.onnxtxt", tmp_path / "if.html"))
    data = graph_data(ROOT / "examples" / "if_branch.onnxtxt")
    index = next(i for i, n in enumerate(data["graph"]["nodes"]) if n.get("bodies"))
    tab.page.locator(f'[data-node="{index}"]').click()
    bodies = tab.page.locator("#panel .open-body")
    assert bodies.count() == len(data["graph"]["nodes"][index]["bodies"]) == 2
    before = tab.layouts()
    bodies.first.click()
    status = tab.wait(before)
    body = data["graph"]["nodes"][index]["bodies"][0][1]
    assert tab.page.locator("[data-node]").count() == len(body["nodes"])
    # the values the body reads from the graph around it come in from boxes of their own
    outer = {x for n in body["nodes"] for x in n["inputs"] if x} - {o for n in body["nodes"] for o in n["outputs"]}
    drawn = tab.page.eval_on_selector_all(".io.outer text", "els => els.map(e => e.textContent)")
    assert outer and sorted(drawn) == sorted(outer)
    assert status["labelledEdges"] == status["edges"]
    assert tab.page.locator("#crumbs a").count() == 2
    before = tab.layouts()
    tab.page.locator("#crumbs a").first.click()  # back to the main graph
    tab.wait(before)
    assert tab.page.locator("[data-node]").count() == len(data["graph"]["nodes"])

    tab.open(write_page(ROOT / "examples" / "local_function.onnxtxt", tmp_path / "fn.html"))
    data = graph_data(ROOT / "examples" / "local_function.onnxtxt")
    index = next(i for i, n in enumerate(data["graph"]["nodes"]) if n.get("call"))
    tab.page.locator(f'[data-node="{index}"]').click()
    before = tab.layouts()
    tab.page.locator("#panel .open-call").click()
    tab.wait(before)
    body = data["functions"][data["graph"]["nodes"][index]["call"]]
    assert tab.page.locator("[data-node]").count() == len(body["nodes"])
    assert tab.errors == []


def test_large_models_render_grouped(tab: Page, tmp_path: Path) -> None:
    """gpt_L96 (9,520 nodes) and the 12.6 GiB LLM of make_big_model.py: grouped, every visible edge labelled (how
    fast: `python -m bench graph`)."""
    models = []
    if GPT_L96.exists():
        models.append(GPT_L96)
    if MAKE_BIG.exists():
        subprocess.run([sys.executable, str(MAKE_BIG), str(tmp_path)], check=True, capture_output=True)
        models.append(tmp_path / "big_llm.onnx")
    if not models:
        pytest.skip("neither gpt_L96 nor make_big_model.py is here")
    for model in models:
        status = tab.open(write_page(model, tmp_path / f"{model.stem}.html"))
        check_status(status, graph_data(model))
        assert status["groups"] > 0 and status["visibleNodes"] + status["groups"] <= 250
        tab.page.screenshot(path=str(tmp_path / f"{model.stem}.png"))
    for f in tmp_path.glob("big_llm.onnx*"):
        f.unlink()
    assert tab.errors == []


def test_every_real_model_renders(browser: Any, tmp_path: Path) -> None:
    """Each model of corpus/ and ../shared/realworld/, sent to one page (as the editor sends a graph): laid out
    with no page error, its node count that of onnx's own reading of the file."""
    models = CORPUS + REALWORLD
    assert models
    shell = tmp_path / "shell.html"
    shell.write_text(page_html(None), encoding="utf-8")
    tab = Page(browser)
    tab.page.goto(shell.as_uri())
    done = 0
    for model in models:
        data = graph_data(model)
        expected = len(onnx.load(str(model), load_external_data=False).graph.node)
        tab.page.evaluate("d => window.graphlsp.load(d)", data)
        status = tab.wait(done)
        done = status["layouts"]
        assert status["nodes"] == expected, model.name
        unknown = "?" in data["graph"]["types"].values()
        assert status["labelledEdges"] == status["edges"] or unknown, model.name
        assert tab.errors == [], model.name
    tab.close()


def test_names_that_look_like_markup_stay_names(tab: Page, tmp_path: Path) -> None:
    model = tmp_path / "markup.onnxtxt"
    model.write_text("""<ir_version: 8, opset_import: ["" : 17]>
markup (float[2] x) => (float[2] "<!--y-->") {
    ["</script><script>window.pwned = 1</script>"] "a&b</b>" = Relu (x)
    ["<b>bold</b>"] "<!--y-->" = Neg ("a&b</b>")
}
""", encoding="utf-8")
    status = tab.open(write_page(model, tmp_path / "g.html"))
    assert status["nodes"] == 2 and status["labelledEdges"] == status["edges"] == 3
    assert tab.page.evaluate("window.pwned") is None
    names = tab.page.eval_on_selector_all(".node text.name", "els => els.map(e => e.textContent)")
    assert sorted(names) == sorted(["</script><script>window.pwned = 1</script>"[:39] + "\u2026", "<b>bold</b>"])
    tab.page.fill("#search", "a&b</b>")
    assert tab.page.locator("#results .hit").count() == 1
    assert tab.errors == []


def test_the_page_draws_under_its_content_security_policy(browser: Any, tmp_path: Path) -> None:
    """The policy (only the page's own scripts, by their nonce; nothing fetched) leaves the page whole: it draws
    with no error and no policy violation on the console (docs/security.md)."""
    out = tmp_path / "mlp.graph.html"
    r = subprocess.run([sys.executable, "-m", "graphlsp", "graph", str(ROOT / "examples" / "mlp.onnxtxt"), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    tab = Page(browser, bypass_csp=False)
    try:
        tab.page.goto(out.resolve().as_uri())
        tab.page.wait_for_selector("body[data-graphlsp-status]", state="attached", timeout=60_000)
        tab.page.wait_for_selector("#layer g", state="attached", timeout=60_000)
        status = tab.status()
        assert status is not None and "error" not in status, status
        assert not tab.errors, tab.errors
    finally:
        tab.close()
