"""The cost in the editor's answers (graphlsp/query.py over text): the hover on a node's op, on a graph output, and
the inlay hint after the graph's name; all follow an edit."""

from __future__ import annotations

from graphlsp import query
from graphlsp.analysis import Analysis

TEXT = """<ir_version: 10, opset_import: ["" : 21]>
g (float[batch, seq, 64] x) => (float[batch, seq, 32] y) <float[64, 32] w = {...}> {
    h = MatMul (x, w)
    y = Relu (h)
}
"""
TEXT = TEXT.replace("{...}", "{" + ", ".join(["0.5"] * 64 * 32) + "}")


def test_hover_on_an_op_gives_its_cost() -> None:
    a = Analysis(TEXT)
    found = query.cost_lines(a, TEXT.index("MatMul"))
    assert "**cost**: FLOPs `4096*batch*seq`, MACs `2048*batch*seq`" in found  # 2 * 64 * 32 per row
    assert "reads `256*batch*seq + 8192` bytes, writes `128*batch*seq`" in found


def test_hover_on_a_graph_output_gives_its_size_and_cost() -> None:
    a = Analysis(TEXT)
    found = query.cost_lines(a, TEXT.index("y = Relu"))
    assert "size: `128*batch*seq` bytes" in found and "graph output of `Relu`" in found
    assert "FLOPs `32*batch*seq`" in found


def test_header_hint_has_the_totals_and_follows_edits() -> None:
    a = Analysis(TEXT)
    header = [h for h in query.inlay_hints(a) if h.label.startswith(" FLOPs ")]
    assert [h.label for h in header] == [" FLOPs 4128*batch*seq · 2.05 k params (8.00 KiB)"]
    assert header[0].offset == TEXT.index(" (float[batch")
    at = TEXT.index("Relu")
    a.apply_edit(at, at + 4, "Sigmoid")
    header = [h for h in query.inlay_hints(a) if h.label.startswith(" FLOPs ")]
    assert header[0].label.startswith(" FLOPs 4128*batch*seq")  # Sigmoid costs as Relu: 1 per element
    a.apply_edit(0, len(a.doc.text), a.doc.text.replace("float[batch, seq, 64] x", "float[batch, 64] x").replace(
        "float[batch, seq, 32] y", "float[batch, 32] y"))
    header = [h for h in query.inlay_hints(a) if h.label.startswith(" FLOPs ")]
    assert header[0].label.startswith(" FLOPs 4128*batch ")


def test_the_cost_kept_across_edits_is_a_fresh_analysis_s() -> None:
    """The editor's cost is patched after each edit (only the nodes the refiner inferred again are costed again);
    after edits of attributes that change the shapes downstream, it equals the cost of a fresh analysis."""
    from graphlsp.cost.model import model_cost
    from graphlsp.cost.report import analysis_cost

    text = """<ir_version: 10, opset_import: ["" : 21]>
g (float[N, 8, H, W] x, float[16, 8, 3, 3] w) => (float y) {
    c = Conv <strides: ints = [1, 1], pads: ints = [1, 1, 1, 1]> (x, w)
    r = Relu (c)
    y = MaxPool <kernel_shape: ints = [2, 2], strides: ints = [2, 2]> (r)
}
"""
    a = Analysis(text)
    analysis_cost(a)
    for old, new in (("strides: ints = [1, 1]", "strides: ints = [2, 2]"), ("pads: ints = [1, 1, 1, 1]", "pads: "
                     "ints = [0, 0, 0, 0]"), ("kernel_shape: ints = [2, 2]", "kernel_shape: ints = [3, 3]")):  # fmt: skip
        at = a.doc.text.index(old)
        report = a.apply_edit(at, at + len(old), new)
        assert report.graph == "patched"
        kept = analysis_cost(a)
        fresh = Analysis(a.doc.text)
        want = model_cost(fresh.model, fresh.refiner)
        assert (str(kept.flops), str(kept.read), str(kept.written)) == (str(want.flops), str(want.read),
                                                                        str(want.written))  # fmt: skip
        assert [str(x) for x, _ in kept.peak.candidates] == [str(x) for x, _ in want.peak.candidates]
    assert kept.flops.unknown == 0 and "floor((H + 1)/2)" in str(kept.flops)  # stride 2, no padding: (H-3)/2 + 1
