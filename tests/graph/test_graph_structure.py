"""Focused tests of the core graph and of each structural finding (GL201-GL209)."""

from __future__ import annotations

import gc

from graph_helpers import HEADER, build, described, nth

from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model


def kinds(text: str) -> list[tuple[str, int, str]]:
    doc, _, findings = build(text)
    return described(doc, findings)


# ---- index: producers, consumers, values, types
def test_producer_and_consumer_index() -> None:
    text = HEADER + """g (float[N] x, float[N] w) => (float[N] y) <float[N] h>
{
  h = Mul (x, w)
  a, , b = Split (h)
  y = Add (h, x)
}
"""
    _, model, findings = build(text)
    g = model.graph
    assert g is not None
    mul, split, add = g.nodes
    assert [n.index for n in g.nodes] == [0, 1, 2]
    h = g.values["h"]
    assert h.producer is mul and h.output_index == 0 and h.kind == "node"
    assert h.consumers == [(split, 0), (add, 0)]
    assert g.consumers("h") == [split, add] and g.producer("h") is mul
    x = g.values["x"]
    assert x.kind == "input" and x.producer is None and x.consumers == [(mul, 0), (add, 1)]
    assert split.outputs[1] is None and [v.name for v in split.outputs if v] == ["a", "b"]
    assert [v.name for v in g.inputs] == ["x", "w"] and [v.name for v in g.outputs] == ["y"]
    assert h.type is not None and h.type.dims is not None and len(h.type.dims) == 1  # from the value_info
    assert g.values["y"].graph_outputs == [g]
    assert mul.successors() == [split, add] and add.predecessors() == [mul]
    assert {f.kind for f in findings} == {"unused-value"}  # a and b


def test_initializers_and_input_defaults() -> None:
    text = HEADER + """g (float[2] x, float[2] d = {1.0, 2.0}) => (float[2] y)
<float[2] w = {3.0, 4.0}, float[2] x = {0.0, 0.0}>
{
  y = Sum (x, d, w)
}
"""
    _, model, findings = build(text)
    g = model.graph
    assert g is not None and findings == []
    assert set(g.initializers) == {"d", "w", "x"}
    assert g.values["w"].kind == "initializer" and g.values["d"].kind == "input"
    assert g.values["d"].is_initializer and g.values["x"].is_initializer  # an initializer may share an input's name


def test_op_resolution_versions_schemas_and_local_functions() -> None:
    text = """<ir_version: 9, opset_import: ["" : 17, "local" : 1, "ai.onnx.ml" : 3]>
g (float[N] x) => (float[N] y, float[N] z)
{
  a = ai.onnx.Relu (x)
  b = Relu (a)
  y = local.F (b)
  z = local.F:v2 (b)
  c = ai.onnx.ml.Normalizer (x)
}
<domain: "local", opset_import: ["" : 15]>
F (X) => (Y) { Y = Relu (X) }
<domain: "local", overload: "v2", opset_import: ["" : 15]>
F (X) => (Y) { Y = Neg (X) }
"""
    _, model, findings = build(text)
    g = model.graph
    assert g is not None
    relu1, relu2, f1, f2, norm = g.nodes
    assert relu1.domain == relu2.domain == "" and relu1.schema is relu2.schema is not None
    assert relu1.version == 17 and relu1.schema.since_version == 14
    assert f1.function is model.functions[("local", "F", "")] and f1.schema is None and f1.version == 1
    assert f2.function is model.functions[("local", "F", "v2")]
    assert norm.schema is not None and norm.schema.domain == "ai.onnx.ml"
    fbody = model.functions[("local", "F", "")].body
    assert fbody is not None and fbody.kind == "function" and fbody.nodes[0].version == 15
    assert [f.kind for f in findings] == ["unused-value"]  # c


# ---- GL201 undefined value, with a suggestion
def test_undefined_value_each_use_and_suggestion() -> None:
    text = HEADER + "g (float x) => (float y) {\n  hidden = Relu (x)\n  a = Add (hiden, x)\n  y = Mul (a, hiden)\n}\n"
    doc, model, findings = build(text)
    assert described(doc, findings) == [
        ("unused-value", 3, "hidden"),
        ("undefined-value", 4, "hiden"),
        ("undefined-value", 5, "hiden"),
    ]
    assert "did you mean 'hidden'?" in findings[1].message
    assert model.graph is not None and model.graph.undefined["hiden"].kind == "undefined"
    assert len(model.graph.undefined["hiden"].consumers) == 2


# ---- GL202 duplicate definition
def test_duplicate_definitions() -> None:
    text = HEADER + """g (float x, float x) => (float y)
{
  t = Relu (x)
  x = Neg (t)
  t = Neg (x)
  y = Add (t, x)
}
"""
    doc, model, findings = build(text)
    got = described(doc, findings)
    assert got == [
        ("duplicate-definition", 2, "x"),
        ("duplicate-definition", 5, "x"),
        ("duplicate-definition", 6, "t"),
    ]
    for f in findings:
        ((_, start, end),) = f.related
        assert doc.text[start:end] == doc.text[f.start : f.end]
    g = model.graph
    assert g is not None and g.values["t"].producer is g.nodes[0]  # uses bind to the first definition
    assert g.nodes[2].outputs[0] is not None and g.nodes[2].outputs[0].duplicate_of is g.values["t"]


# ---- GL203 order and cycles
def test_use_before_definition_is_not_a_cycle() -> None:
    text = HEADER + "g (float x) => (float y) {\n  y = Neg (e)\n  e = Relu (x)\n}\n"
    doc, model, findings = build(text)
    (f,) = findings
    assert (f.code, f.kind, doc.text[f.start : f.end]) == ("GL203", "use-before-definition", "e")
    assert doc.text[f.related[0][1] : f.related[0][2]] == "e" and f.related[0][1] > f.start
    g = model.graph
    assert g is not None and [n.op_type for n in g.topological_order()] == ["Relu", "Neg"]
    assert g.cyclic_nodes() == []


def test_cycle_reported_distinctly_with_its_path() -> None:
    text = HEADER + """g (float x) => (float y)
{
  a = Add (x, c)
  b = Relu (a)
  c = Neg (b)
  y = Identity (c)
}
"""
    doc, model, findings = build(text)
    (f,) = findings
    assert (f.code, f.kind, doc.text[f.start : f.end]) == ("GL203", "cycle", "c")
    assert f.start == nth(text, "c)")
    assert "a -> b -> c" in f.message
    assert [doc.text[s:e] for _, s, e in f.related] == ["a", "b", "c"]
    g = model.graph
    assert g is not None
    assert [n.op_type for n in g.cyclic_nodes()] == ["Add", "Relu", "Neg"]
    assert [n.op_type for n in g.topological_order()] == ["Add", "Relu", "Neg", "Identity"]


def test_self_cycle() -> None:
    text = HEADER + "g (float x) => (float y) {\n  y = Add (y, x)\n}\n"
    doc, model, findings = build(text)
    assert [(f.kind, doc.text[f.start : f.end]) for f in findings] == [("cycle", "y")]
    assert model.graph is not None and model.graph.cyclic_nodes() == model.graph.nodes


def test_topological_order_is_stable_by_file_order() -> None:
    text = HEADER + """g (float x) => (float y)
{
  y = Sum (p, q, r)
  r = Neg (x)
  p = Relu (x)
  q = Add (p, r)
}
"""
    doc, model, findings = build(text)
    g = model.graph
    assert g is not None
    assert [n.outputs[0].name for n in g.topological_order() if n.outputs[0]] == ["r", "p", "q", "y"]
    # the three reads in Sum come too early; q reads p and r after they are defined
    assert described(doc, findings) == [("use-before-definition", 4, n) for n in ("p", "q", "r")]


# ---- subgraphs see the outer scope; their values do not leak
IF_TEXT = HEADER + """g (bool cond, float x) => (float y, float z)
{
  k = Relu (x)
  y = If (cond) <
    then_branch = t () => (float o1) { o1 = Add (k, x) },
    else_branch = e () => (float o2) { inner = Neg (k)  o2 = Neg (inner) }
  >
  z = Relu (inner)
}
"""


def test_subgraph_reads_outer_scope_and_its_values_do_not_leak() -> None:
    doc, model, findings = build(IF_TEXT)
    g = model.graph
    assert g is not None
    relu, if_node, relu2 = g.nodes
    then_g, else_g = if_node.subgraphs["then_branch"][0], if_node.subgraphs["else_branch"][0]
    assert then_g.parent is g and then_g.owner is if_node and then_g.attribute == "then_branch"
    k = g.values["k"]
    # outer values read inside a subgraph: consumers are the subgraph nodes, the If node depends on them
    assert (then_g.nodes[0], 0) in k.consumers and (else_g.nodes[0], 0) in k.consumers
    assert then_g.nodes[0].inputs[0] is k and then_g.lookup("k") is k
    assert then_g.is_outer(k) and not g.is_outer(k) and not else_g.is_outer(else_g.values["inner"])
    assert set(if_node.implicit) == {"k", "x"} and if_node.predecessors() == [relu]
    assert relu.successors() == [if_node]
    assert "inner" in else_g.values and "inner" not in g.values
    # k is consumed only inside subgraphs: not unused; `inner` does not leak out of the else branch
    assert described(doc, findings) == [("undefined-value", 9, "inner")]
    assert [sg.name for sg in g.subgraphs()] == ["t", "e"]
    assert [n.op_type for n in g.all_nodes()] == ["Relu", "If", "Add", "Neg", "Neg", "Relu"]


def test_subgraph_order_duplicates_and_outputs() -> None:
    text = HEADER + """g (bool cond, float x) => (float y, float w)
{
  k = Relu (x)
  y = If (cond) <
    then_branch = t () => (float o1) { o1 = Add (k, late) },
    else_branch = e () => (float k) { k = Neg (x) }
  >
  late = Neg (x)
  w = If (cond) <then_branch = t2 () => (float missing) { u = Relu (x) },
                 else_branch = e2 () => (float w2) { w2 = Neg (w) }>
}
"""
    doc, model, findings = build(text)
    got = described(doc, findings)
    assert got == [
        ("use-before-definition", 6, "late"),  # `late` is defined after the If that reads it
        ("duplicate-definition", 7, "k"),  # a subgraph may not redefine an outer value (SSA)
        ("output-never-produced", 10, "missing"),
        ("unused-value", 10, "u"),
        ("cycle", 11, "w"),  # the If reads its own output inside a branch
    ]
    g = model.graph
    assert g is not None
    assert g.nodes[1].subgraphs["else_branch"][0].outputs[0] is g.values["k"]  # resolves to the outer k


def test_function_body_sees_only_its_inputs() -> None:
    text = """<ir_version: 9, opset_import: ["" : 18, "local" : 1]>
g (float x) => (float y)
{
  y = local.F (x)
}
<domain: "local", opset_import: ["" : 18]>
F (X) => (Y, Z)
{
  Y = Add (X, x)
}
"""
    doc, model, findings = build(text)
    got = described(doc, findings)
    assert got == [("output-never-produced", 7, "Z"), ("undefined-value", 9, "x")]
    msg = next(f.message for f in findings if f.kind == "undefined-value")
    assert "function body sees only its inputs" in msg and "did you mean 'X'?" in msg
    body = model.functions[("local", "F", "")].body
    assert body is not None and body.parent is None and body.lookup("x") is None


# ---- GL204 unknown op, GL209 op not in the imported opset
def test_unknown_op_with_suggestions() -> None:
    text = HEADER + "g (float x) => (float y) {\n  a = Reluu (x)\n  y = softmax (a)\n}\n"
    doc, model, findings = build(text)
    assert described(doc, findings) == [("unknown-op", 3, "Reluu"), ("unknown-op", 4, "softmax")]
    assert "did you mean 'Relu'?" in findings[0].message and "did you mean 'Softmax'?" in findings[1].message
    assert model.graph is not None and model.graph.nodes[0].schema is None


def test_unknown_op_in_a_local_domain_suggests_its_functions() -> None:
    text = """<ir_version: 9, opset_import: ["" : 18, "local" : 1]>
g (float x) => (float y) { y = local.LayerNrm (x) }
<domain: "local", opset_import: ["" : 18]>
LayerNorm (X) => (Y) { Y = Identity (X) }
"""
    doc, _, findings = build(text)
    assert described(doc, findings) == [("unknown-op", 2, "LayerNrm")]
    assert "did you mean 'LayerNorm'?" in findings[0].message


def test_custom_domain_ops_are_not_checked() -> None:
    text = '<ir_version: 9, opset_import: ["" : 18, "com.microsoft" : 1]>\n'
    text += "g (float x) => (float y) { y = com.microsoft.FastGelu (x) }\n"
    _, model, findings = build(text)
    assert findings == []
    assert model.graph is not None and model.graph.nodes[0].version == 1 and model.graph.nodes[0].schema is None


def test_op_not_in_opset() -> None:
    text = '<ir_version: 8, opset_import: ["" : 13]>\n'
    text += "g (float[N] x) => (float[N] y, float[N] z) {\n  y = LayerNormalization (x)\n  z = Upsample (x)\n}\n"
    doc, model, findings = build(text)
    assert described(doc, findings) == [
        ("op-not-in-opset", 3, "LayerNormalization"),
        ("op-not-in-opset", 4, "Upsample"),
    ]
    assert "not in opset 13" in findings[0].message and "added in opset 17" in findings[0].message
    assert "removed" in findings[1].message and "opset 10" in findings[1].message
    assert model.graph is not None and model.graph.nodes[0].schema is None and model.graph.nodes[0].version == 13
    # the same ops are fine where they exist
    _, _, ok = build(text.replace('"" : 13', '"" : 17').replace("Upsample", "Resize"))
    assert ok == []


# ---- GL205 missing opset import
def test_missing_opset_import_in_model_and_function() -> None:
    text = """<ir_version: 9, opset_import: ["" : 18]>
g (float x) => (float y) { y = local.F (x) }
<domain: "local", opset_import: ["local" : 1]>
F (X) => (Y) { Y = Relu (X) }
"""
    doc, _, findings = build(text)
    assert described(doc, findings) == [("missing-opset-import", 2, "local"), ("missing-opset-import", 4, "Relu")]
    assert "'local' is not imported" in findings[0].message and "model's opset_import" in findings[0].message
    assert "function's opset_import" in findings[1].message


def test_function_without_opset_import_falls_back_to_the_model() -> None:
    text = """<ir_version: 9, opset_import: ["" : 18, "local" : 1]>
g (float x) => (float y) { y = local.F (x) }
<domain: "local">
F (X) => (Y) { Y = Relu (X) }
"""
    _, model, findings = build(text)
    assert findings == []
    body = model.functions[("local", "F", "")].body
    assert body is not None and body.nodes[0].version == 18


def test_model_without_any_opset_import() -> None:
    doc, model, findings = build("g (float x) => (float y) {\n  y = Relu (x)\n}\n")
    assert described(doc, findings) == [("missing-opset-import", 1, "g")]
    assert model.graph is not None and model.graph.nodes[0].version is None


# ---- GL206 labels, GL207 unused
def test_duplicate_labels_and_unused_values() -> None:
    text = HEADER + "g (float x) => (float y) {\n  [n] a = Relu (x)\n  [n] y, extra = Split (a)\n}\n"
    doc, _, findings = build(text)
    assert described(doc, findings) == [("duplicate-node-label", 4, "n"), ("unused-value", 4, "extra")]
    assert [f.severity for f in findings] == ["warning", "warning"]


# ---- statements with syntax errors
def test_statements_with_syntax_errors_get_no_structural_findings() -> None:
    body = "  a = Relu (x)\n  b = Add <axis = > (a, x)\n  c = Relu (x\n  y = Add (a, b)\n"
    text = HEADER + "g (float x) => (float y) {\n" + body + "}\n"
    doc, model, findings = build(text)
    assert doc.problems  # the syntax layer reports both statements
    g = model.graph
    assert g is not None and [n.op_type for n in g.nodes] == ["Relu", "Relu", "Add"]  # c's statement was repaired
    # b is written only in a statement that did not parse: not reported undefined; c (in a statement with a
    # syntax error) is not reported unused
    assert findings == []
    # without the broken statements, the same graph has both findings
    clean = text.replace("  b = Add <axis = > (a, x)\n", "").replace("c = Relu (x\n", "c = Relu (x)\n")
    doc2, _, findings2 = build(clean)
    assert not doc2.problems
    assert described(doc2, findings2) == [("unused-value", 4, "c"), ("undefined-value", 5, "b")]


# ---- positions follow incremental edits
def test_finding_positions_after_an_incremental_edit() -> None:
    text = HEADER + "g (float x) => (float y) {\n  a = Relu (x)\n  b = Neg (a)\n  c = Neg (b)\n  y = Add (a, c)\n}\n"
    doc = SyntaxDocument(text)
    assert build_model(doc)[1] == []
    start = nth(text, "(a)")
    report = doc.apply_edit(start + 1, start + 2, "previous_value")
    assert report.mode == "incremental"
    assert any(p.origin for p in doc.pieces)  # the statements after the edit moved
    text2 = text[: start + 1] + "previous_value" + text[start + 2 :]
    assert doc.text == text2
    model, findings = build_model(doc)
    assert [(f.kind, f.start, f.end) for f in findings] == [
        ("undefined-value", start + 1, start + 1 + len("previous_value"))
    ]
    # an edit before a later finding moves it; ranges of values and nodes follow too
    doc.apply_edit(nth(text2, "c = Neg"), nth(text2, "c = Neg"), "q = Neg (x)\n  ")
    model, findings = build_model(doc)
    text3 = doc.text
    got = sorted((f.kind, text3[f.start : f.end], f.start) for f in findings)
    assert got == sorted([
        ("undefined-value", "previous_value", nth(text3, "previous_value")),
        ("unused-value", "q", nth(text3, "q = Neg")),
    ])
    g = model.graph
    assert g is not None
    c = g.values["c"]
    assert c.span is not None and text3[c.span[0] : c.span[1]] == "c"
    add = g.producer("y")
    assert add is not None and text3[slice(*add.op_span)] == "Add" and text3[slice(*add.input_span(1))] == "c"


def test_gc_state_is_restored() -> None:
    assert gc.isenabled()
    build(HEADER + "g (float x) => (float y) { y = Relu (x) }")
    assert gc.isenabled()
