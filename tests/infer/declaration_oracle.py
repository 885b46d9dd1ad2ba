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


def main(paths: list[str]) -> int:
    yes = no = 0
    for p in map(Path, paths):
        for value, dim, sizes, declared, node in findings(p):
            ok = confirmed(p, value, dim, sizes, declared, node)
            yes, no = yes + ok, no + (not ok)
            print(f"{'confirmed' if ok else 'NOT CONFIRMED'}: {p.name} {value} dim {dim} at {sizes}")
    print(f"{yes} confirmed, {no} not confirmed")
    return 1 if no else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
