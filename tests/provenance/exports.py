"""The test modules of `torch_modules.py` exported once per session, by torch's dynamo exporter and by its
TorchScript exporter (`verbose=True`: the frames in each node's doc_string), with the dims the findings are about
declared dynamic."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MODULES = HERE / "torch_modules.py"

# module class -> (example input shape, the dynamic axis and its name)
CASES = {
    "TracedReshape": ((2, 3, 4), 0, "batch"),
    "PositionTable": ((2, 5, 8), 1, "seq"),
    "StridedConcat": ((2, 6, 4), 1, "n"),
}


def makes_lines() -> dict[str, tuple[int, str]]:
    """Each module class's `# makes: Op` line: (1-based line, op)."""
    out: dict[str, tuple[int, str]] = {}
    current = ""
    for i, line in enumerate(MODULES.read_text().splitlines(), 1):
        m = re.match(r"class (\w+)", line)
        if m:
            current = m.group(1)
        m = re.search(r"# makes: (\w+)", line)
        if m:
            out[current] = (i, m.group(1))
    return out


def export_all(folder: Path) -> dict[tuple[str, str], Path]:
    """(exporter, class) -> the exported model."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    import sys

    sys.path.insert(0, str(HERE))
    try:
        import torch_modules
    finally:
        sys.path.remove(str(HERE))
    from torch.export import Dim

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (shape, axis, dim) in CASES.items():
            module = getattr(torch_modules, name)().eval()
            x = torch.randn(*shape)
            path = folder / f"dynamo_{name}.onnx"
            torch.onnx.export(module, (x,), str(path), dynamo=True, dynamic_shapes=({axis: Dim.AUTO},), verbose=False)
            out[("dynamo", name)] = path
            path = folder / f"torchscript_{name}.onnx"
            torch.onnx.export(module, (x,), str(path), dynamo=False, verbose=True, input_names=["x"],
                              dynamic_axes={"x": {axis: dim}})  # fmt: skip
            out[("torchscript", name)] = path
    return out
