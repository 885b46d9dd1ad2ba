"""Input sizes judged by execution: a model run in onnxruntime at a size assignment, against `graphlsp check --dim`.

    python -m tests.infer.size_oracle [MODEL.onnx ...]    # default: corpus/sizes/ with its MANIFEST.json

For each assignment of sizes to a model's dim_params: onnxruntime runs it on CPU (inputs of those sizes) and
either runs or fails at a node it names; graphlsp checks the model with those sizes bound and reports its errors
by node. They agree when graphlsp reports an error on the node onnxruntime fails at, and none where it runs.
Without bindings, `shape-condition` (GL320) and `fixed-dynamic-dim` (GL321) are listed per model.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SIZES = ROOT / "corpus" / "sizes"
SHARED = ROOT.parent / "shared"


def path_of(entry: dict) -> Path:
    """A manifest entry's model: in corpus/sizes, elsewhere in the corpus (`../models/x.onnx`), or among the real
    models beside the repository (`shared:realworld/x.onnx`)."""
    file = entry["file"]
    return SHARED / file.removeprefix("shared:") if file.startswith("shared:") else SIZES / file


def sizes_of(assignment: dict) -> dict[str, int]:
    """The dim sizes of an assignment (its "feeds" are values of inputs that are not sizes)."""
    return {k: v for k, v in assignment.items() if k != "feeds"}


@dataclass
class Verdict:
    model: str
    sizes: dict[str, int]
    runtime: str  # "runs", or the name of the node onnxruntime fails at ("?" when it names none)
    errors: list[str] = field(default_factory=list)  # nodes graphlsp reports an error on

    @property
    def agrees(self) -> bool:
        if self.runtime == "runs":
            return not self.errors
        return self.runtime in self.errors


def _default(name: str) -> int:
    """A size for a symbol the assignment leaves out: an image's 224 x 224 x 3, else 1."""
    low = name.lower()
    return 224 if "height" in low or "width" in low else 3 if "channel" in low else 1


def _dim(name: str, sizes: dict[str, int]) -> int:
    """A declared dim_param at the sizes: a symbol, or a sum of symbols (`past_sequence_length + sequence_length`)."""
    if name in sizes:
        return sizes[name]
    parts = [x.strip() for x in name.split("+")]
    if len(parts) > 1 and all(x in sizes or x.isdigit() for x in parts):
        return sum(sizes[x] if x in sizes else int(x) for x in parts)
    return _default(name)


def _feeds(session: object, sizes: dict[str, int], given: dict | None = None) -> dict[str, np.ndarray]:
    """Inputs of those sizes: masks all ones, positions 0..n-1, token ids words of a text (4-63: no padding or other
    special token, which roberta's positions skip), other ints small."""
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():  # type: ignore[attr-defined]
        shape = [_dim(d, sizes) if isinstance(d, str) else d if isinstance(d, int) and d >= 0 else 1
                 for d in i.shape]  # fmt: skip
        if given and i.name in given:
            kind = np.bool_ if "bool" in i.type else np.int64 if "int64" in i.type else np.float32
            feeds[i.name] = np.array(given[i.name], kind).reshape([x if x >= 0 else 1 for x in shape] or [])
        elif "bool" in i.type:
            feeds[i.name] = np.ones(shape, np.bool_)
        elif "int32" in i.type:
            feeds[i.name] = rng.integers(0, 4, shape).astype(np.int32)
        elif "int64" in i.type:
            feeds[i.name] = (np.ones(shape, np.int64) if "mask" in i.name else
                             np.broadcast_to(np.arange(shape[-1]), shape).astype(np.int64) if "position" in i.name
                             else rng.integers(4, 64, shape).astype(np.int64) if i.name.endswith("input_ids")
                             else rng.integers(0, 4, shape).astype(np.int64))  # fmt: skip
        elif "float16" in i.type:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float16)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def run(path: Path, sizes: dict[str, int], given: dict | None = None) -> str:
    """"runs", or the node onnxruntime fails at (the innermost, for a node in an If's branch); `given`: values
    of inputs that are not sizes."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    try:
        session.run(None, _feeds(session, sizes, given))
    except Exception as e:
        names = re.findall(r"node\. Name:'([^']*)'", str(e))
        return names[-1] if names else "?"
    return "runs"


def check(path: Path, sizes: dict[str, int] | None) -> list[tuple[str, str, str]]:
    """graphlsp's (severity, code, node) for the model at those sizes (or with none bound)."""
    from graphlsp.infer.sizes import InputSizes
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary

    settings = Settings(sizes=InputSizes(tuple((sizes or {}).items())))
    return [(x.severity, x.code, x.node or _pinning_node(x.message)) for x in lint_binary(str(path), settings)]


def _pinning_node(message: str) -> str:
    """The node a GL321 (on the input) names: "... but Reshape '/Reshape' fixes it to 1"."""
    m = re.search(r"but \S+ '([^']*)' fixes it", message)
    return m.group(1) if m else ""


def judge(path: Path, assignment: dict) -> Verdict:
    sizes = sizes_of(assignment)
    errors = sorted({node for severity, _, node in check(path, sizes) if severity == "error"})
    return Verdict(path.stem, sizes, run(path, sizes, assignment.get("feeds")), errors)


def manifest(folder: Path = SIZES) -> dict[str, dict]:
    return json.loads((folder / "MANIFEST.json").read_text())


def main(argv: list[str]) -> int:
    entries = manifest()
    names = [Path(a).stem for a in argv] or list(entries)
    bad = 0
    for name in names:
        path = path_of(entries[name])
        if not path.exists():
            print(f"{name}: {path} is not here (skipped)")
            continue
        warnings = [f"{code} {node}" for severity, code, node in check(path, None) if code in ("GL320", "GL321")]
        print(f"{name}: {'; '.join(warnings) or 'no condition'}")
        for assignment in entries[name]["assignments"]:
            v = judge(path, assignment)
            bad += not v.agrees
            at = " ".join(f"{k}={x}" for k, x in assignment.items())
            print(f"  {at:40} onnxruntime: {v.runtime:30} graphlsp errors: {', '.join(v.errors) or '-':30} "
                  f"{'ok' if v.agrees else 'DISAGREE'}")  # fmt: skip
    print(f"{bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
