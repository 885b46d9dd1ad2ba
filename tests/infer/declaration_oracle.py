"""An oracle for GL315 on symbolic declarations: onnxruntime run at the finding's witness (the sizes its message
names) either fails on the value's producer, or computes the value with a dim other than the declared one there.

`python -m tests.infer.declaration_oracle MODEL...` prints each finding with its verdict and the counts."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.infer import size_oracle

WITNESS = re.compile(r"'(?P<value>[^']+)' is declared with dim (?P<dim>\d+) = (?P<declared>.*), but .* gives .*: "
                     r"at (?P<at>[^ ].*?) that is (?P<theirs>-?\d+), not (?P<ours>-?\d+)$")  # fmt: skip


def findings(path: Path) -> list[tuple[str, int, dict[str, int], int, str]]:
    """(value, dim, witness sizes, declared size there, producer) of each GL315 with a witness."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.infer.contracts import declaration_findings

    model, loaded = read_model(path)
    out = []
    for f in declaration_findings(ModelAnalysis(model, loaded).refiner):  # every value (`check` says them as one)
        m = WITNESS.search(f.message)
        if m is None:
            continue
        sizes = {k: int(v) for k, v in (kv.split("=") for kv in m.group("at").split(", "))}
        node = f.node.name if f.node is not None else ""
        out.append((m.group("value"), int(m.group("dim")), sizes, int(m.group("theirs")), node))
    return out


def confirmed(path: Path, value: str, dim: int, sizes: dict[str, int], declared: int, node: str) -> bool:
    """Whether onnxruntime, at `sizes`, fails on `node` or gives `value` a dim `dim` other than `declared`."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(path))
    del model.graph.value_info[:]  # onnxruntime checks no symbolic declaration; the value is what it computes
    if value not in {o.name for o in model.graph.output}:
        model.graph.output.append(onnx.ValueInfoProto(name=value))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    try:
        got = session.run([value], size_oracle._feeds(session, sizes))[0]
    except Exception as e:
        return f"Name:'{node}'" in str(e)
    return got.ndim > dim and got.shape[dim] != declared


def concrete(path: Path) -> list[tuple[str, str, bool]]:
    """(value, producer, in the main graph) of each GL315 on a declared type that contradicts inference outright
    (no sizes: a rank, an element type, a fixed dim)."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model

    model, loaded = read_model(path)
    analysis = ModelAnalysis(model, loaded)
    main = {v.name for n in (model.graph.nodes if model.graph else []) for v in n.outputs if v is not None}
    return [(f.detail[len("output "):], f.node.name if f.node is not None else "", f.detail[7:] in main)
            for f in analysis.refiner.findings() if f.code == "GL315" and f.detail.startswith("output ")]


def confirmed_concrete(path: Path, value: str, node: str) -> bool:
    """Whether onnxruntime, fed at the sizes the oracle feeds, fails on `node` or computes `value` with another
    element type, rank or fixed dim than its declaration (its first value_info entry, or its graph output)."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper

    model = onnx.load(str(path))
    declared = next((vi for vi in [*model.graph.output, *model.graph.value_info] if vi.name == value), None)
    assert declared is not None, value
    del model.graph.value_info[:]
    if value not in {o.name for o in model.graph.output}:
        model.graph.output.append(onnx.ValueInfoProto(name=value))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    try:
        got = np.asarray(session.run([value], size_oracle._feeds(session, {}))[0])
    except Exception as e:
        return f"Name:'{node}'" in str(e)
    t = declared.type.tensor_type
    if t.elem_type and helper.tensor_dtype_to_np_dtype(t.elem_type) != got.dtype:
        return True
    if not t.HasField("shape"):
        return False
    dims = t.shape.dim
    if len(dims) != got.ndim:
        return True
    return any(x.HasField("dim_value") and x.dim_value != n for x, n in zip(dims, got.shape, strict=True))


def main(paths: list[str]) -> int:
    yes = no = unchecked = 0
    for p in map(Path, paths):
        for value, dim, sizes, declared, node in findings(p):
            ok = confirmed(p, value, dim, sizes, declared, node)
            yes, no = yes + ok, no + (not ok)
            print(f"{'confirmed' if ok else 'NOT CONFIRMED'}: {p.name} {value} dim {dim} at {sizes}")
        for value, node, in_main in concrete(p):
            if not in_main:  # a subgraph's value: onnxruntime cannot return it
                unchecked += 1
                print(f"not checkable (in a subgraph): {p.name} {value}")
                continue
            ok = confirmed_concrete(p, value, node)
            yes, no = yes + ok, no + (not ok)
            print(f"{'confirmed' if ok else 'NOT CONFIRMED'}: {p.name} {value} (no sizes)")
    print(f"{yes} confirmed, {no} not confirmed, {unchecked} in subgraphs not checked")
    return 1 if no else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
