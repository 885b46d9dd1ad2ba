"""torch's FLOP counter against `graphlsp cost --dim` (tools/cost_torch.py, whose full run covers 14 models with
BERT, GPT-2 and Whisper from transformers): on a decoder with its past and grouped-query attention and on a U-Net
(Conv, ConvTranspose), exported to ONNX, at two input sizes each, the FLOPs of the ops the counter covers are torch's
exactly."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_tool

pytest.importorskip("torch")
pytest.importorskip("onnxscript")


def _tool() -> ModuleType:
    return load_tool("cost_torch")


@pytest.mark.parametrize("name", ["llama_past", "unet"])
def test_graphlsp_counts_what_torch_counts(name: str, tmp_path: Path) -> None:
    tool = _tool()
    r = tool.compare(name, tool._models(hf=False)[name], tmp_path)
    assert len(r["sizes"]) == 2
    for size in r["sizes"]:
        assert size["covered_unknown"] == []
        assert size["graphlsp_covered"] == size["torch"] > 0, size["dims"]
        # what torch does not count is there too: element-wise ops, pooling, softmax
        assert size["graphlsp_total"] > size["torch"]
