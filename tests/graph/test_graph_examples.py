"""The graph layer on the example files: the planted structural errors of broken.onnxtxt, nothing elsewhere."""

from __future__ import annotations

import re
import time

import pytest
from graph_helpers import EXAMPLES, build, described, line_of

from graphlsp.graph.findings import CODES
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model
from tests.conftest import shared

STRUCTURAL = {kind for kind, _ in CODES.values()}
EXPECT = re.compile(r"#\s*expect:\s*([a-z-]+)\s*$")
CLEAN = sorted(p.name for p in EXAMPLES.glob("*.onnxtxt") if p.name != "broken.onnxtxt")


def _markers(text: str) -> dict[int, str]:
    return {i: m.group(1) for i, line in enumerate(text.splitlines(), 1) if (m := EXPECT.search(line))}


def test_broken_planted_structural_errors_found_at_their_lines() -> None:
    text = (EXAMPLES / "broken.onnxtxt").read_text()
    markers = _markers(text)
    planted = {line: kind for line, kind in markers.items() if kind in STRUCTURAL}
    assert set(planted.values()) == {
        "undefined-value", "duplicate-definition", "unknown-op", "missing-opset-import",
        "duplicate-node-label", "unused-value", "output-never-produced",
    }  # fmt: skip
    doc, _, findings = build(text)
    found = {(line, kind) for kind, line, _ in described(doc, findings)}
    for line, kind in planted.items():
        assert (line, kind) in found, f"line {line}: expected {kind}, found {sorted(found)}"
    # and nothing else: every structural finding sits on a line planted with that kind
    assert found == set((line, kind) for line, kind in planted.items())


def test_broken_ranges_cover_the_offending_element() -> None:
    doc, _, findings = build((EXAMPLES / "broken.onnxtxt").read_text())
    got = {(kind, text) for kind, _, text in described(doc, findings)}
    assert got == {
        ("output-never-produced", "never_made"),
        ("duplicate-node-label", "relu1"),
        ("duplicate-definition", "act"),
        ("undefined-value", "hidden_state"),
        ("unknown-op", "Swishy"),
        ("missing-opset-import", "com.acme"),
        ("unused-value", "spare"),
    }


def test_broken_messages_name_things_and_relate_first_definitions() -> None:
    doc, _, findings = build((EXAMPLES / "broken.onnxtxt").read_text())
    by_kind = {f.kind: f for f in findings}
    undefined = by_kind["undefined-value"]
    assert undefined.message.startswith(
        "'hidden_state' is not defined: no node, graph input or initializer produces it"
    )
    dup = by_kind["duplicate-definition"]
    ((_, start, end),) = dup.related
    assert doc.text[start:end] == "act" and line_of(doc, start) == 14
    label = by_kind["duplicate-node-label"]
    ((_, start, end),) = label.related
    assert doc.text[start:end] == "relu1" and line_of(doc, start) == 14
    assert label.severity == "warning" and by_kind["unused-value"].severity == "warning"
    assert undefined.severity == "error"


@pytest.mark.parametrize("name", CLEAN)
def test_clean_examples_have_no_structural_findings(name: str) -> None:
    _, model, findings = build((EXAMPLES / name).read_text())
    assert findings == []
    assert model.graph is not None and model.graph.nodes
    # every op resolves to a schema or to a model-local function
    for g in model.graphs():
        for node in g.nodes:
            assert (node.schema is None) != (node.function is None), node


def test_gpt_bench_has_no_structural_findings() -> None:
    path = shared("bench", "gpt_L24.onnxtxt")
    _, model, findings = build(path.read_text())
    assert findings == []
    assert model.graph is not None and len(model.graph.nodes) > 2000
    assert model.graph.topological_order() == model.graph.nodes


def test_build_time_on_the_largest_benchmark() -> None:
    path = shared("bench", "gpt_L96.onnxtxt")
    doc = SyntaxDocument(path.read_text())
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        model, findings = build_model(doc)
        times.append(time.perf_counter() - t0)
    assert model.graph is not None and len(model.graph.nodes) == 9520 and findings == []
    assert min(times) < 0.25, f"build_model took {min(times) * 1000:.0f} ms"
