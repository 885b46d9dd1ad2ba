"""Adversarial models for every op of onnx's schemas: a shape rule never sees a value its checks have not accepted.

For each op (the newest version in every domain) one text model holds many nodes: inputs of every kind (each slot
typed as its constraint allows, wrong types, unknown and huge shapes, no inputs at all), constant inputs of extreme
values in every slot (NaN, inf, int64's ends, empty tensors), and attributes one at a time with the wrong kind or
an extreme value (NaN, inf and 1e309 where an int is expected, strings and floats inside integer lists, integers
beyond int64, empty lists), with every required attribute present so that the rule runs. No GL399 (a shape rule
failing inside graphlsp) and no exception may come out of any of them, nor out of `graphlsp check`.
"""

from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Iterator

import onnx.defs
import pytest
from onnx import AttributeProto as AP

from graphlsp.analysis import Analysis
from graphlsp.lint.diagnostics import collect_analysis

I64_MAX, I64_MIN = "9223372036854775807", "-9223372036854775808"
HUGE = "99999999999999999999"

# attribute values of every wrong kind, and extreme values of the right one
ATTR_ANY = [
    "1e309", "-1e309", "nan", "inf", "-inf", HUGE, f"-{HUGE}", I64_MAX, I64_MIN, '"s"', '""', "-1", "0", "2.5",
    '[1, "a"]', '[1.5, "a"]', "[1e309]", f"[{HUGE}, 1]", "[nan, 1]", f"[{I64_MAX}, {I64_MIN}]", "[]",
    "[-1, -1]", "[0, 0, 0, 0, 0, 0, 0, 0]", '["a", "b"]', "[inf, inf, inf, inf]", "float[1] {nan}",
    f"int64[2] {{{I64_MAX}, {I64_MIN}}}", "int64[0] {}", "int64 {3}", "float[2, 2] {1, 2, 3, 4}", 'string[1] {"x"}',
    "float", "seq(float)", "float[1] {1}", "[float[1] {1}, int64 {1}]",
]  # fmt: skip
ATTR_TYPED = {  # an annotation that fits the schema, with content at the edge
    AP.INT: [f"int = {HUGE}", f"int = {I64_MAX}", f"int = {I64_MIN}", "int = -1", "int = 2147483648"],
    AP.INTS: ["ints = []", f"ints = [{I64_MAX}, {I64_MIN}]", f"ints = [{I64_MAX}, {I64_MAX}, {I64_MAX}, {I64_MAX}]",
              "ints = [-1, -1, -1, -1, -1, -1, -1, -1]"],
    AP.FLOAT: ["float = 1e309", "float = nan", "float = -inf", "float = 3e38", "float = -0.0"],
    AP.FLOATS: ["floats = []", "floats = [nan, inf, -inf, 1]", "floats = [3e38, 3e38, 3e38, 3e38]"],
    AP.STRING: ['string = ""', 'string = "\\u0000"'],
    AP.TENSOR: ["tensor = float[0] {}", f"tensor = int64[2] {{{I64_MAX}, {I64_MIN}}}", "tensor = float[1] {nan}",
                "tensor = double {1e308}"],
}  # fmt: skip
REQUIRED = {  # a plausible value for a required attribute, so that the rule runs
    AP.INT: "1", AP.FLOAT: "1.0", AP.STRING: '"a"', AP.INTS: "[1]", AP.FLOATS: "[1.0]", AP.STRINGS: '["a"]',
    AP.TENSOR: "float[1] {1}", AP.TYPE_PROTO: "float",
    AP.GRAPH: "g () => (float[1] gy) { gy = Constant <value = float[1] {1}> () }",
}  # fmt: skip
# extreme constant values by element type
CONSTS = {
    "float": ["float[2] {nan, inf}", "float {inf}", "float {nan}", "float[1] {-inf}", "float[0] {}", "float {3e38}",
              "float[4] {nan, nan, nan, nan}"],
    "double": ["double[2] {1e308, -1e308}", "double {inf}", "double {nan}"],
    "float16": ["float16[2] {65504, -65504}", "float16 {inf}"],
    "int64": [f"int64[2] {{{I64_MAX}, {I64_MIN}}}", f"int64 {{{I64_MAX}}}", f"int64 {{{I64_MIN}}}", "int64[1] {-1}",
              "int64[0] {}", "int64[3] {0, 0, 0}", "int64[4] {-1, -1, -1, -1}", f"int64[1] {{{I64_MAX}}}"],
    "int32": ["int32[2] {2147483647, -2147483648}", "int32 {-2147483648}", "int32[0] {}"],
    "uint64": ["uint64[1] {18446744073709551615}"],
    "bool": ["bool[1] {1}", "bool {0}", "bool[0] {}"],
    "string": ['string[1] {""}'],
}  # fmt: skip
SHAPES = ["[2, 3, 4, 5]", "[4]", "", "[0]", f"[{I64_MAX}, 2]", "[4611686018427387904, 4]", "[N, M]", "[]"]
PREFERRED = ["float", "int64", "int32", "bool", "string", "uint8", "double", "float16"]


@functools.cache
def schemas() -> list[onnx.defs.OpSchema]:
    newest: dict[tuple[str, str], onnx.defs.OpSchema] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        key = (s.domain, s.name)
        if key not in newest or s.since_version > newest[key].since_version:
            newest[key] = s
    return sorted((s for s in newest.values() if not s.deprecated), key=lambda s: (s.domain, s.name))


@functools.cache
def opsets() -> dict[str, int]:
    out: dict[str, int] = collections.defaultdict(int)
    for s in onnx.defs.get_all_schemas_with_history():
        out[s.domain] = max(out[s.domain], s.since_version)
    return dict(out)


def _elem(schema: onnx.defs.OpSchema, i: int) -> str:
    """An element type input i takes (its constraint's, float first), or float."""
    params = schema.inputs
    if not params:
        return "float"
    p = params[min(i, len(params) - 1)]
    allowed = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}.get(p.type_str)
    types = allowed if allowed is not None else [p.type_str]
    tensors = [t[7:-1] for t in types if t.startswith("tensor(")]
    for name in PREFERRED:
        if name in tensors:
            return name
    return tensors[0] if tensors else "float"


def model_text(schema: onnx.defs.OpSchema) -> str:
    dom = schema.domain
    op = f"{dom}.{schema.name}" if dom else schema.name
    versions = opsets()
    imports = f'"" : {versions[""]}' + (f', "{dom}" : {versions[dom]}' if dom else "")
    n_in = min(max(schema.min_input, 1), 5) if schema.max_input > 0 else 0
    n_out = min(max(schema.min_output, 1), 4)
    counter = itertools.count()
    required = ", ".join(f"{name} = {REQUIRED.get(a.type, '1')}" for name, a in schema.attributes.items() if a.required)

    def node(args: list[str], attrs: str = "") -> str:
        outs = ", ".join(f"o{next(counter)}" for _ in range(n_out))
        given = ", ".join(x for x in (required, attrs) if x)
        return f"{outs} = {op} {f'<{given}> ' if given else ''}({', '.join(args)})"

    inputs: list[str] = []
    nodes: list[str] = []

    def graph_input(ty: str) -> str:
        name = f"x{len(inputs)}"
        inputs.append(f"{ty} {name}")
        return name

    typed = [[graph_input(f"{_elem(schema, i)}{shape}") for i in range(n_in)] for shape in SHAPES]
    for args in typed:  # every slot typed as its constraint allows, in each shape
        if n_in:
            nodes.append(node(args))
    for ty in ["float[2, 3]", "int64[2]", "bool", "string[2]", "float[]", "seq(float[2])", "optional(int64)"]:
        x = graph_input(ty)  # one type in every slot, allowed or not
        if n_in:
            nodes.append(node([x] * n_in))
    nodes.append(node([]))  # no inputs at all
    nodes.append(" =" + node(typed[0] if n_in else []).split("=", 1)[1])  # no outputs at all
    consts = [c for cs in CONSTS.values() for c in cs]
    for j, c in enumerate(consts):
        nodes.append(f"c{j} = Constant <value = {c}> ()")
    base = typed[0]
    for slot in range(min(max(schema.max_input, 0), 6)):
        for j in range(len(consts)):
            args = (base + [base[-1] if base else "x0"] * 6)[: max(n_in, slot + 1)]
            args[slot] = f"c{j}"
            nodes.append(node(args))
    for name, a in schema.attributes.items():
        for v in ATTR_ANY:
            nodes.append(node(base, f"{name} = {v}") if not a.required else node(base).replace(
                f"{name} = {REQUIRED.get(a.type, '1')}", f"{name} = {v}", 1))
        for v in ATTR_TYPED.get(a.type, []):
            text = f"{name}: {v}"
            nodes.append(node(base, text) if not a.required else node(base).replace(
                f"{name} = {REQUIRED.get(a.type, '1')}", text, 1))
    return (f"<ir_version: 10, opset_import: [{imports}]>\nadversarial ({', '.join(inputs)}) => () {{\n  "
            + "\n  ".join(nodes) + "\n}\n")  # fmt: skip


def cases() -> Iterator[tuple[str, str]]:
    for s in schemas():
        yield f"{s.domain or 'ai.onnx'}.{s.name}", model_text(s)


def _chunks(n: int) -> list[list[tuple[str, str]]]:
    all_cases = list(cases())
    return [all_cases[i::n] for i in range(n)]


@pytest.mark.parametrize("chunk", range(4))
def test_no_internal_error_in_any_shape_rule(chunk: int) -> None:
    failures = []
    for name, text in _chunks(4)[chunk]:
        try:
            diags = collect_analysis(Analysis(text), f"{name}.onnxtxt")
        except Exception as e:  # pragma: no cover - a failure is what this test looks for
            failures.append(f"{name}: {type(e).__name__}: {e}")
            continue
        lines = text.splitlines()
        failures += [f"{name}: {lines[d.line - 1].strip()[:160]}: {d.message}" for d in diags if d.code == "GL399"]
    assert not failures, "\n".join(failures[:40])


def test_schemas_are_covered() -> None:
    assert len(schemas()) > 200
    text = dict(cases())["ai.onnx.Range"]
    assert "Range (c" in text and "<" in text


def test_wrong_values_are_findings_and_rules_do_not_run() -> None:
    """What the rule would have computed with is reported where it is written; the outputs stay unknown."""
    text = """<ir_version: 10, opset_import: ["" : 21]>
g (float[2, 3] x, float l) => (y1, y2, y3, y4, y5, y6) {
  y1 = Transpose <perm = [1, "a"]> (x)
  y2 = Concat <axis = 99999999999999999999> (x, x)
  inf = Constant <value = float {inf}> ()
  zero = Constant <value = float {0}> ()
  one = Constant <value = float {1}> ()
  y3 = Range (zero, inf, one)
  y4 = Identity ()
  axes = Constant <value = float[1] {nan}> ()
  y5 = ReduceSum (x, axes)
  y6 = Flatten <axis = 1e309> (x)
}
"""
    a = Analysis(text)
    diags = collect_analysis(a)
    codes = {(d.line, d.code) for d in diags}
    assert (3, "GL103") in codes  # a list of ints cannot hold a string
    assert (4, "GL103") in codes  # out of range for int64
    assert (8, "GL317") in codes  # Range: limit is inf
    assert (9, "GL312") in codes  # Identity takes one input
    assert (11, "GL311") in codes  # axes must be int64
    assert (12, "GL314") in codes  # axis must be int
    assert not [d for d in diags if d.code == "GL399"]
    outs = {v.name: a.refiner.type_of(v) for v in a.model.graph.outputs}
    for name in ("y1", "y2", "y3", "y4", "y6"):
        ty = outs[name]
        assert ty is None or getattr(ty, "shape", None) is None, (name, ty)


def test_ops_of_a_domain_not_imported_never_reach_a_rule_short_of_outputs() -> None:
    """No opset for the domain: no schema to check the node against, and still no rule sees a node without the
    outputs every version of the op has."""
    text = """<ir_version: 10, opset_import: ["com.acme" : 1]>
g (float[2] x) => (y) {
   = Identity (x)
   = Equal (x, x)
  a, b = TopK (x, x)
  y = Relu (x)
}
"""
    diags = collect_analysis(Analysis(text))
    assert not [d for d in diags if d.code == "GL399"]
