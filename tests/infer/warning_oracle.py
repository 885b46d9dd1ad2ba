"""Size conditions judged by execution: onnxruntime run at the witness of every GL320 and GL321.

    python -m tests.infer.warning_oracle [MODEL.onnx ...]   # default: corpus/, ../shared/realworld, corpus/sizes

A GL320 or GL321 names sizes ("it fails at height=33"); onnxruntime runs the model there (sizes the witness leaves
out as the size oracle picks them; a bool input, such as a merged decoder's `use_cache_branch`, both ways, and an
audio model's `sr` at 16000 and 8000) and must
fail at the finding's node. Confirmed when it does; not confirmed when it runs, or fails at another node.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from tests.infer import size_oracle as oracle

FAILS_AT = re.compile(r"\(it fails at ([^)]*)\)")


@dataclass
class Judged:
    model: str
    code: str
    node: str
    sizes: dict[str, int]
    runtime: str  # where onnxruntime fails (the node, "runs", or "?")

    @property
    def confirmed(self) -> bool:
        return self.runtime == self.node


def witness(message: str) -> dict[str, int]:
    m = FAILS_AT.search(message)
    if m is None:
        return {}
    return {k: int(v) for k, v in (kv.rsplit("=", 1) for kv in m.group(1).split(", "))}


def _bool_inputs(path: Path) -> list[str]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return [i.name for i in model.graph.input if i.type.tensor_type.elem_type == onnx.TensorProto.BOOL]


def judge(path: Path) -> list[Judged]:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary

    out = []
    flags = _bool_inputs(path)
    for x in lint_binary(str(path), Settings()):
        if x.code not in ("GL320", "GL321"):
            continue
        node = x.node or oracle._pinning_node(x.message)
        sizes = witness(x.message)
        got = "?"
        for value, rate in product(([True], [False]) if flags else ([True],), (16000, 8000)):
            got = oracle.run(path, sizes, {"sr": rate, **{f: value for f in flags}})
            if got == node:
                break
        out.append(Judged(path.name, x.code, node, sizes, got))
    return out


def models() -> list[Path]:
    found = sorted((oracle.ROOT / "corpus" / "models").glob("*.onnx"))
    found += sorted((oracle.ROOT / "corpus" / "ultralytics").glob("*.onnx"))
    found += sorted((oracle.SHARED / "realworld").glob("*.onnx"))
    found += sorted(oracle.SIZES.glob("*.onnx"))
    return found


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or models()
    good = bad = 0
    for path in paths:
        for j in judge(path):
            good += j.confirmed
            bad += not j.confirmed
            verdict = "confirmed" if j.confirmed else f"NOT CONFIRMED (onnxruntime: {j.runtime})"
            at = ", ".join(f"{k}={v}" for k, v in j.sizes.items())
            print(f"{j.model}: {j.code} {j.node} at {at}: {verdict}")
    print(f"{good} confirmed, {bad} not confirmed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
