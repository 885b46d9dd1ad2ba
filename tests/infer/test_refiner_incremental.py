"""The ShapeRefiner after edits: re-infers only the changed cone, and the state always equals a fresh analysis."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlsp.analysis import Analysis
from graphlsp.infer.types import type_str
from tests.conftest import example_texts

TEXTS = {k: v for k, v in example_texts().items()}
NUMBER = re.compile(r"(?<![A-Za-z_0-9.])-?[0-9]+(?:\.[0-9]+)?(?![A-Za-z_0-9.])")


def state(a: Analysis) -> tuple[object, ...]:
    types = []
    for graph in a.model.graphs():
        for value in graph.values.values():
            types.append((graph.name, value.name, type_str(a.refiner.type_of(value))))
    findings = sorted((f.code, f.message, f.start, f.end, f.severity) for f in a.findings())
    return tuple(sorted(types)), tuple(findings), tuple(sorted(p.message for p in a.doc.problems))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_number_edits_equal_a_fresh_analysis(name: str, data: st.DataObject) -> None:
    """Changing numbers (attribute values, tensor data, dims) keeps the structure: the patched path."""
    a = Analysis(TEXTS[name])
    for _ in range(data.draw(st.integers(1, 4))):
        spans = [(m.start(), m.end()) for m in NUMBER.finditer(a.doc.text)]
        if not spans:
            return
        start, end = data.draw(st.sampled_from(spans))
        a.apply_edit(start, end, str(data.draw(st.integers(-3, 64))))
        assert state(a) == state(Analysis(a.doc.text))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_any_edit_equals_a_fresh_analysis(name: str, data: st.DataObject) -> None:
    a = Analysis(TEXTS[name])
    for _ in range(data.draw(st.integers(1, 3))):
        start = data.draw(st.integers(0, len(a.doc.text)))
        end = data.draw(st.integers(start, min(len(a.doc.text), start + 12)))
        a.apply_edit(start, end, data.draw(st.sampled_from(["", "x", "1", " ", "\n", ")", "= Relu (a)\n", "2"])))
        assert state(a) == state(Analysis(a.doc.text))


def test_constant_edit_reinfers_only_its_cone(gpt_l24_text: str) -> None:
    a = Analysis(gpt_l24_text)
    i = a.doc.text.find("Constant <value: tensor = float {0.5}>", len(a.doc.text) // 2)
    assert i > 0
    j = a.doc.text.find("{", i) + 1
    report = a.apply_edit(j, j + 3, "0.25")
    assert report.graph == "patched"
    assert 1 <= report.inferred <= 3  # the Constant, its consumer, and no further: the types came out the same
    assert report.nodes[0].op_type == "Constant"
    assert state(a) == state(Analysis(a.doc.text))
