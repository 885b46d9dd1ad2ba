"""Acceptance 2 of issue 38: on every dynamo export of the corpus, the frame chosen for at least 95% of the nodes
with a stack trace is the model's own code (corpus/*.py, or the model's package: transformers, torchvision,
diffusers, ultralytics), never torch's; the nodes left have no such frame at all (torch's own runtime asserts,
FX-generated code), which the test lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphlsp.binary.read import read_model
from graphlsp.provenance.trace import is_library, of_node

MODELS = Path(__file__).resolve().parents[2] / "corpus" / "models"
OWN_PACKAGES = ("transformers", "torchvision", "diffusers", "ultralytics")


def _own(file: str) -> bool:
    f = file.replace("\\", "/")
    return "/corpus/" in f or any(f"-packages/{p}/" in f for p in OWN_PACKAGES)


def test_dynamo_exports_choose_the_models_own_frame() -> None:
    models = sorted(MODELS.glob("*.onnx"))
    assert any(p.name.startswith("dynamo_") for p in models)
    traced = own = 0
    rest = []
    for path in models:
        model, _ = read_model(path)
        for g in model.graphs():
            for node in g.nodes:
                src = of_node(node)
                if src is None or not src.frames:
                    continue
                assert path.name.startswith("dynamo_"), path  # only the dynamo exporter writes stack traces here
                traced += 1
                frame = src.frame
                if frame is not None and _own(frame.file):
                    own += 1
                    continue
                rest.append((path.name, node.index, node.op_type, [f.file for f in src.frames]))
                # what is left has no frame of the model's at all: never a frame of torch chosen over one
                assert frame is None and all(is_library(f.file) for f in src.frames), rest[-1]
    print(f"{own} of {traced} traced nodes choose the model's own frame ({own / traced:.1%}); the rest:")
    for r in rest:
        print("  ", r)
    assert traced >= 300
    assert own / traced >= 0.95


@pytest.mark.parametrize(("file", "library"), [
    ("/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", True),
    ("/venv/lib/python3.11/site-packages/onnxscript/function_libs/torch_lib/ops/core.py", True),
    ("C:\\Python311\\Lib\\site-packages\\torch\\nn\\functional.py", True),
    ("/usr/lib/python3.11/contextlib.py", True),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/copyreg.py", True),
    ("<frozen importlib._bootstrap>", True),
    ("<eval_with_key>.71", True),
    ("torch/fx/passes/runtime_assert.py", True),
    ("/src/pytorch/torch/_dynamo/eval_frame.py", True),
    ("/venv/lib/python3.11/site-packages/transformers/models/whisper/modeling_whisper.py", False),
    ("/work/project/models/torch/model.py", False),  # a folder named torch in the user's own tree
    ("/home/me/src/model.py", False),
])  # fmt: skip
def test_library_frames(file: str, library: bool) -> None:
    assert is_library(file) is library


def test_a_real_world_dynamo_export_chooses_the_notebook_cell() -> None:
    """silero_vad_op18_ifless.onnx (../shared/realworld) was exported by dynamo from a Jupyter cell: every traced
    node's chosen frame is that cell's file (the model's own code), none torch's."""
    from tests.conftest import shared

    model, _ = read_model(shared("realworld", "silero_vad_op18_ifless.onnx"))
    chosen = [src.frame for g in model.graphs() for n in g.nodes if (src := of_node(n)) is not None and src.frames]
    assert len(chosen) >= 80
    assert all(f is not None and f.file.startswith("/tmp/ipykernel_") and not is_library(f.file) for f in chosen)
