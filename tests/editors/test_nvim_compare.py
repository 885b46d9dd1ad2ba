"""`:GraphlspCompare` (editors/nvim/lua/graphlsp/compare.lua) in a headless Neovim with the real server: a binary
model beside itself at HEAD, in a diff split, each side the server's text view."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx

from tests.conftest import ROOT, missing, needs
from tests.editors.test_nvim import NVIM, WHY, run_nvim

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "graphlsp.cli", "serve"]
CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"

pytestmark = [needs(NVIM, WHY)]


def test_compare_with_head_opens_a_diff_split(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        missing("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    model = repo / "model.onnx"
    shutil.copy(CNN, model)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    m = onnx.load(str(model))
    softmax = next(n for n in m.graph.node if n.op_type == "Softmax")
    next(a for a in softmax.attribute if a.name == "axis").i = 0
    onnx.save(m, str(model))
    r = run_nvim(HERE / "nvim_compare.lua", tmp_path, GRAPHLSP_CMD=json.dumps(SERVER), GRAPHLSP_MODEL=str(model))
    assert r.get("done") is True, r
    assert r["windows"] == 2 and r["diff"] == [True, True]
    head, now = r["texts"]
    assert "Softmax <axis: int = -1>" in head and "Softmax <axis: int = 0>" in now
    assert r["names"][0].endswith("graphlsp://HEAD/model.onnx") and r["names"][1] == str(model)
