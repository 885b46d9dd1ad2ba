"""The graph page shades each collapsed group by its share of the model's FLOPs (graphlsp/cost), writes the share
in the group's box, and has a legend that says what the shade means; in a real browser."""

from __future__ import annotations

from pathlib import Path

from graphlsp.cli import main
from graphlsp.graphview import file_graph
from graphlsp.lint.config import Settings
from tests.graphview.browser import Page

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "corpus" / "models" / "optimum_gpt2.onnx"  # 539 nodes in name scopes: groups start collapsed


def test_shares_in_the_data_add_up() -> None:
    data = file_graph(str(MODEL), Settings())
    shares = [n["flops"] for n in data["graph"]["nodes"] if "flops" in n]
    assert abs(sum(shares) - 1) < 1e-9 and max(shares) < 0.2
    assert data["cost"]["at"] == "batch_size, past_sequence_length, sequence_length = 512"
    assert data["cost"]["flops"].startswith("batch_size + 65*batch_size*past_sequence_length")


def test_groups_are_shaded_by_their_share_with_a_legend(tab: Page, tmp_path: Path) -> None:
    out = tmp_path / "g.html"
    assert main(["graph", str(MODEL), "-o", str(out)]) == 0
    status = tab.open(out)
    assert status["groups"] > 0
    legend = tab.page.locator("#cost-legend")
    assert "share of FLOPs" in legend.inner_text() and legend.get_attribute("title").startswith("FLOPs: ")
    groups = tab.page.evaluate("""[...document.querySelectorAll('.group')].map((g) => ({
        heat: g.querySelector('.heat') ? Number(g.querySelector('.heat').getAttribute('fill-opacity')) : 0,
        text: g.querySelector('.name').textContent }))""")
    shaded = [g for g in groups if "% FLOPs" in g["text"]]
    assert shaded and all(g["heat"] > 0.08 for g in shaded)
    share = [float(g["text"].split("% FLOPs")[0].rsplit(" ", 1)[1]) for g in shaded]
    heats = [g["heat"] for g in shaded]
    assert heats.index(max(heats)) == share.index(max(share))  # the darkest group is the costliest
    tab.page.screenshot(path=str(tmp_path / "cost.png"))
