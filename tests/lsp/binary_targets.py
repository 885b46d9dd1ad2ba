"""What the editor tests on a binary model's view expect, computed without the server: the view's text (graphlsp.view
renders it), `graphlsp check` on the binary, a node output to hover with its type as the binary's own analysis
infers it, and a node input whose producer `gd` jumps to."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.infer.types import type_str
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.lint.runner import lint_binary
from graphlsp.view import render

REALWORLD = Path(__file__).resolve().parents[3] / "shared" / "realworld"


def realworld() -> list[Path]:
    return sorted(REALWORLD.glob("*.onnx"))


@dataclass
class Targets:
    text: str
    sha256: str
    check: list[Diagnostic]  # `graphlsp check` on the binary, default settings
    hover: tuple[int, int, str, str]  # line, column (0-based, ASCII text), value name, its type
    use: tuple[int, int, str, int]  # line, column of a node input, its name, the line of its producer's output


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def targets(path: Path) -> Targets:
    view = render(str(path))
    text = view.text
    binary, found = read_model(path)
    b = ModelAnalysis(binary, found)
    g, bg = view.analysis.model.graph, binary.graph
    assert g is not None and bg is not None
    hover = None
    for vn, bn in zip(g.nodes, bg.nodes, strict=True):
        out, bout = vn.outputs[0] if vn.outputs else None, bn.outputs[0] if bn.outputs else None
        if out is None or bout is None or out.span is None:
            continue
        ty = type_str(b.refiner.type_of(bout))
        if "[" in ty and vn.op_type != "Constant":
            hover = (*_position(text, out.span[0] + 1), out.name, ty)
            break
    use = None
    for n in g.nodes:
        for i, v in enumerate(n.inputs):
            span = n.input_span(i)
            if v is None or span is None or v.kind != "node" or v.span is None or v.producer is None:
                continue
            line, col = _position(text, span[0] + 1)
            target = _position(text, v.span[0])[0]
            if target != line:
                use = (line, col, v.name, target)
                break
        if use is not None:
            break
    assert hover is not None and use is not None, path
    check = lint_binary(str(path), Settings())
    return Targets(text, hashlib.sha256(text.encode()).hexdigest(), check, hover, use)
