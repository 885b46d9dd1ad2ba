"""Parsing well-formed files: exact source ranges, onnx's keyword look-ahead, the shapes of statements."""

from __future__ import annotations

import pytest

from graphlsp.syntax import tree as t
from graphlsp.syntax.document import SyntaxDocument
from tests.conftest import example_texts

HEADER = '<ir_version: 8, opset_import: ["" : 18, "com.microsoft" : 1]>\n'


def parse(body: str) -> SyntaxDocument:
    doc = SyntaxDocument(HEADER + body)
    assert doc.problems == []
    return doc


@pytest.mark.parametrize("name", [n for n in example_texts() if n != "broken.onnxtxt"])
def test_examples_parse_clean(name: str) -> None:
    doc = SyntaxDocument(example_texts()[name])
    assert doc.problems == []
    assert doc.model.graph is not None and doc.model.graph.nodes


def test_gpt_l24_parses_clean(gpt_l24_text: str) -> None:
    doc = SyntaxDocument(gpt_l24_text)
    assert doc.problems == []
    assert len(doc.model.graph.nodes) == sum(1 for p in doc.pieces if p.kind == "node")  # type: ignore[union-attr]
    assert len(doc.model.graph.nodes) > 2000  # type: ignore[union-attr]


def test_every_element_has_its_exact_range() -> None:
    doc = parse('g (float[N, "M+1", ?, 3] x) => (float[N] y) {\n  [lbl] y = com.microsoft.Foo:ov <axis: int = -1> (x, , "q\\"z")\n}\n')
    text = doc.text
    sig = doc.model.graph.sig  # type: ignore[union-attr]
    x = sig.inputs[0]
    assert text[x.start : x.end] == 'float[N, "M+1", ?, 3] x'
    assert [text[d.start : d.end] for d in x.type.dims] == ["N", '"M+1"', "?", "3"]  # type: ignore[union-attr]
    assert [(d.kind, d.value) for d in x.type.dims] == [  # type: ignore[union-attr]
        ("param", "N"), ("param", "M+1"), ("unknown", None), ("value", 3)
    ]
    node = doc.model.graph.nodes[0]  # type: ignore[union-attr]
    assert text[node.start : node.end] == '[lbl] y = com.microsoft.Foo:ov <axis: int = -1> (x, , "q\\"z")'
    assert (node.op.domain, node.op.op_type, node.op.overload) == ("com.microsoft", "Foo", "ov")
    assert text[node.op.op_start : node.op.end] == "Foo:ov"
    assert node.label is not None and text[node.label.start : node.label.end] == "lbl"
    assert [None if i is None else text[i.start : i.end] for i in node.inputs] == ["x", None, '"q\\"z"']
    assert node.inputs[2] is not None and node.inputs[2].value == 'q"z'
    attr = node.attributes[0]
    assert text[attr.start : attr.end] == "axis: int = -1"
    assert isinstance(attr.value, t.LiteralValue) and attr.value.literal.value == -1


def test_type_names_are_names_where_onnx_expects_a_name() -> None:
    # onnx's NextIsType look-ahead: `float` is a type before a name, a plain name as a node output.
    doc = parse("g (float x, seq(float[N]) s, map(int64, float) m) => (float inf) {\n  float = Relu (x)\n  inf = Abs (float)\n}\n")
    sig = doc.model.graph.sig  # type: ignore[union-attr]
    assert [vi.type.kind for vi in sig.inputs] == ["tensor", "seq", "map"]  # type: ignore[union-attr]
    assert sig.inputs[0].type.dims == []  # type: ignore[union-attr]  # scalar
    nodes = doc.model.graph.nodes  # type: ignore[union-attr]
    assert nodes[0].outputs[0].value == "float"  # type: ignore[union-attr]
    assert nodes[1].inputs[0].value == "float"  # type: ignore[union-attr]


def test_attribute_values_of_every_kind() -> None:
    doc = parse(
        "g (float[2] x) => (float[2] y) {\n"
        "  y = Foo <f = -inf, i = 3, s = \"a\", l = [1, 2], e: ints = [], t = float[2] w {1, 2},\n"
        "           u = float[2] {3, 4}, tp = seq(float), r = @ref, g = body (float a) => (float b) { b = Abs (a) }> (x)\n"
        "}\n"
    )
    values = {a.name.value: a.value for a in doc.model.graph.nodes[0].attributes}  # type: ignore[union-attr]
    assert isinstance(values["f"], t.LiteralValue) and values["f"].literal.value == float("-inf")
    assert isinstance(values["l"], t.ListValue) and len(values["l"].items) == 2
    assert isinstance(values["e"], t.ListValue) and values["e"].items == []
    assert isinstance(values["t"], t.TensorValue) and values["t"].name is not None
    assert isinstance(values["u"], t.TensorValue) and values["u"].name is None
    assert isinstance(values["tp"], t.TypeValue) and values["tp"].type.kind == "seq"
    assert isinstance(values["r"], t.RefValue) and values["r"].ref.value == "ref"
    assert isinstance(values["g"], t.GraphValue) and values["g"].graph.nodes[0].op.op_type == "Abs"


def test_attributes_after_inputs_and_empty_slots() -> None:
    doc = parse("g (float[2] x) => (float[2] y) {\n  , y, = Foo (, x,) <axis = 1>\n}\n")
    node = doc.model.graph.nodes[0]  # type: ignore[union-attr]
    assert [o.value if o else None for o in node.outputs] == [None, "y"]
    assert [i.value if i else None for i in node.inputs] == [None, "x"]
    assert node.attrs_before is False and node.attributes[0].name.value == "axis"


def test_functions_and_their_headers() -> None:
    doc = parse(
        "g (float[2] x) => (float[2] y) {\n  y = local.F <a = 2> (x)\n}\n"
        '<domain: "local", opset_import: ["" : 18]>\nF <a, b: int = 1> (float[2] X, Z) => (Y) <float[2] T> {\n'
        "  T = Abs (X)\n  Y = Identity (T)\n}\n"
    )
    fn = doc.model.functions[0]
    assert fn.sig.name.value == "F" and [e.key.value for e in fn.sig.header] == ["domain", "opset_import"]
    assert [(a.name.value, a.has_default) for a in fn.sig.attributes] == [("a", False), ("b", True)]
    assert [p.type is not None for p in fn.sig.inputs] == [True, False]
    assert [v.name.value for v in fn.sig.value_infos] == ["T"]
    assert len(fn.nodes) == 2
