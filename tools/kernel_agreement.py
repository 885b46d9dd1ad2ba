"""Acceptance of the `no-kernel` rule (GL701) against onnxruntime: single-node models of every ai.onnx op at each
of its schema versions and with each type its schema allows, made from onnx's node tests (the node, its
attributes and input shapes, with the element types varied per type constraint), loaded by onnxruntime on CPU
(session creation only). graphlsp agrees when it flags a node with GL701 (error) exactly when onnxruntime fails
with NOT_IMPLEMENTED; models failing otherwise (an attribute that does not fit the varied type, a shape error)
are counted apart.

    .venv/bin/python tools/kernel_agreement.py [--sample N] [--seed S] [--show 20]

tests/lint/test_deployment.py runs a sample of it.
"""

from __future__ import annotations

import argparse
import random
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import onnx
from onnx import TypeProto, helper

MAX_SEEDS_PER_OP = 3


@dataclass(slots=True)
class Case:
    name: str
    op: str
    version: int
    types: str  # the varied assignment, for the report
    model: onnx.ModelProto


def _seeds() -> dict[str, list[onnx.ModelProto]]:
    warnings.filterwarnings("ignore")
    from onnx.backend.test.case.node import collect_testcases

    out: dict[str, list[onnx.ModelProto]] = {}
    seen: set[tuple[str, int, int]] = set()
    for case in collect_testcases():
        if "_expanded" in case.name or len(case.model.graph.node) != 1:
            continue
        node = case.model.graph.node[0]
        if node.domain not in ("", "ai.onnx"):
            continue
        key = (node.op_type, len(node.input), len(node.output))
        if key in seen or len(out.get(node.op_type, [])) >= MAX_SEEDS_PER_OP:
            continue
        seen.add(key)
        out.setdefault(node.op_type, []).append(case.model)
    return out


def _tensor_elem(type_str: str) -> tuple[str, int] | None:
    """`tensor(float)` -> ("tensor", FLOAT); `seq(tensor(float))` -> ("seq", FLOAT); others None."""
    for kind, prefix in (("tensor", "tensor("), ("seq", "seq(tensor(")):
        if type_str.startswith(prefix):
            name = type_str[len(prefix):].rstrip(")").upper()
            value = onnx.TensorProto.DataType.Value(name) if name in onnx.TensorProto.DataType.keys() else None  # noqa: SIM118
            return (kind, value) if value is not None else None
    return None


def _retyped(tp: TypeProto, type_str: str) -> TypeProto | None:
    got = _tensor_elem(type_str)
    if got is None:
        return None
    kind, elem = got
    new = TypeProto()
    if kind == "tensor":
        if tp.HasField("tensor_type"):
            new.CopyFrom(tp)
            new.tensor_type.elem_type = elem
        else:
            new.tensor_type.elem_type = elem
        return new
    if tp.HasField("sequence_type") and tp.sequence_type.elem_type.HasField("tensor_type"):
        new.CopyFrom(tp)
        new.sequence_type.elem_type.tensor_type.elem_type = elem
        return new
    new.sequence_type.elem_type.tensor_type.elem_type = elem
    return new


def _formal_index(i: int, params: list[onnx.defs.OpSchema.FormalParameter]) -> int | None:
    if i < len(params):
        return i
    if params and params[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        return len(params) - 1
    return None


def generate(max_opset: int = 28) -> Iterator[Case]:
    """Every model of the set, in a stable order."""
    seeds = _seeds()
    history: dict[str, list[int]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "" and not s.deprecated and s.since_version <= max_opset:
            history.setdefault(s.name, []).append(s.since_version)
    done: set[tuple[str, int, str, int]] = set()
    for op in sorted(seeds):
        for seed_index, seed in enumerate(seeds[op]):
            node = seed.graph.node[0]
            types = {v.name: v.type for v in [*seed.graph.input, *seed.graph.output]}
            for version in sorted(history.get(op, [])):
                schema = onnx.defs.get_schema(op, version, "")
                for constraint in schema.type_constraints:
                    for type_str in constraint.allowed_type_strs:
                        assign = {constraint.type_param_str: type_str}
                        key = (op, version, f"{constraint.type_param_str}={type_str}", seed_index)
                        if key in done:
                            continue
                        done.add(key)
                        model = _build(seed, node, schema, types, assign, version)
                        if model is not None:
                            yield Case(f"{op}_v{version}_{constraint.type_param_str}_{type_str}_{seed_index}", op,
                                       version, f"{constraint.type_param_str}={type_str}", model)  # fmt: skip


def _build(seed: onnx.ModelProto, node: onnx.NodeProto, schema: onnx.defs.OpSchema, types: dict[str, TypeProto],
           assign: dict[str, str], version: int) -> onnx.ModelProto | None:  # fmt: skip
    def typed(names: list[str], params: list[onnx.defs.OpSchema.FormalParameter]) -> list[onnx.ValueInfoProto] | None:
        out = []
        for i, name in enumerate(names):
            if not name:
                continue
            f = _formal_index(i, params)
            tp = types.get(name)
            if tp is None:
                return None
            if f is not None and params[f].type_str in assign:
                tp = _retyped(tp, assign[params[f].type_str])
                if tp is None:
                    return None
            vi = onnx.ValueInfoProto(name=name)
            vi.type.CopyFrom(tp)
            out.append(vi)
        return out

    ins = typed(list(node.input), list(schema.inputs))
    outs = typed(list(node.output), list(schema.outputs))
    if ins is None or outs is None:
        return None
    graph = helper.make_graph([node], "g", ins, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    model.ir_version = min(seed.ir_version or 10, 10) if version <= 21 else 10
    return model


def ort_result(model: onnx.ModelProto) -> str:
    """"ok", "not-implemented" or "other" (onnxruntime refuses the model for another reason)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:
        return "not-implemented" if "NOT_IMPLEMENTED" in str(e) else "other"
    return "ok"


def graphlsp_result(model: onnx.ModelProto, target: str = "onnxruntime:cpu") -> tuple[bool, str]:
    """Whether graphlsp's GL701 flags the model (an error), and its message."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import model_from_proto
    from graphlsp.lint.deployment import NO_KERNEL, deployment_findings

    m, findings = model_from_proto(model)
    analysis = ModelAnalysis(m, findings)
    got = [f for f in deployment_findings(m, analysis.refiner, [target]) if f.code == NO_KERNEL]
    errors = [f for f in got if f.severity == "error"]
    return bool(errors), "; ".join(f.message for f in (errors or got))


@dataclass(slots=True)
class Tally:
    models: int = 0
    loaded: int = 0
    not_implemented: int = 0
    other: int = 0
    agree: int = 0
    false_flags: int = 0  # flagged, but onnxruntime loads it
    missed: int = 0  # NOT_IMPLEMENTED, not flagged

    @property
    def agreement(self) -> float:
        decided = self.loaded + self.not_implemented
        return self.agree / decided if decided else 1.0


def run(cases: list[Case], show: int = 0) -> tuple[Tally, list[str]]:
    t = Tally()
    notes: list[str] = []
    for case in cases:
        t.models += 1
        ort = ort_result(case.model)
        if ort == "other":
            t.other += 1
            continue
        flagged, message = graphlsp_result(case.model)
        if ort == "ok":
            t.loaded += 1
            if flagged:
                t.false_flags += 1
                notes.append(f"FALSE FLAG {case.name}: {message}")
            else:
                t.agree += 1
        else:
            t.not_implemented += 1
            if flagged:
                t.agree += 1
            else:
                t.missed += 1
                notes.append(f"MISSED {case.name} {message}")
    return t, notes[: show or len(notes)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0, help="check a random sample of this many models")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=30, help="disagreements listed")
    args = ap.parse_args()
    cases = list(generate())
    if args.sample:
        cases = random.Random(args.seed).sample(cases, min(args.sample, len(cases)))
    t, notes = run(cases, args.show)
    for n in notes:
        print(n)
    ops = Counter(c.op for c in cases)
    print(f"models {t.models} (ops {len(ops)}), loaded {t.loaded}, NOT_IMPLEMENTED {t.not_implemented}, "
          f"other failures {t.other}")  # fmt: skip
    print(f"agreement {t.agree}/{t.loaded + t.not_implemented} = {100 * t.agreement:.2f}%, false flags "
          f"{t.false_flags}, missed {t.missed}")  # fmt: skip
    return 0 if t.false_flags == 0 and t.agreement >= 0.995 else 1


if __name__ == "__main__":
    sys.exit(main())
