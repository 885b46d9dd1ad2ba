"""`graphlsp.renderRevision`: a model as it is at a git revision, what the editors' "Compare with HEAD" puts beside
the file in their diff view (VS Code's `graphlsp-rev:` documents, Neovim's :GraphlspCompare HEAD)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import onnx
import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.conftest import ROOT, missing

CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


async def _run(client: LanguageClient, command: str, **args: Any) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=command, arguments=[args]))
    assert isinstance(result, dict), result
    return result


@pytest.mark.asyncio
async def test_render_revision_gives_the_committed_model(vscode: LanguageClient, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        missing("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    model = repo / "model.onnx"
    shutil.copy(CNN, model)
    (repo / "m.onnxtxt").write_text("<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2] x) => (float[2] y) {\n"
                                    "   y = Relu (x)\n}\n")  # fmt: skip
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    m = onnx.load(str(model))
    softmax = next(n for n in m.graph.node if n.op_type == "Softmax")
    next(a for a in softmax.attribute if a.name == "axis").i = 0
    onnx.save(m, str(model))
    (repo / "m.onnxtxt").write_text((repo / "m.onnxtxt").read_text().replace("Relu", "Sigmoid"))

    head = await _run(vscode, "graphlsp.renderRevision", path=str(model), rev="HEAD")
    now = await _run(vscode, "graphlsp.renderView", path=str(model))
    assert head["error"] is None and "at HEAD" in head["text"]
    assert "Softmax <axis: int = -1>" in head["text"] and "Softmax <axis: int = 0>" in now["text"]
    # the two views differ only where the model did (and in the first line, which names the revision)
    changed = [a for a, b in zip(head["text"].splitlines()[1:], now["text"].splitlines()[1:], strict=True) if a != b]
    assert len(changed) == 1 and "Softmax" in changed[0]
    text = await _run(vscode, "graphlsp.renderRevision", uri=(repo / "m.onnxtxt").as_uri())
    assert "y = Relu (x)" in text["text"] and text["rev"] == "HEAD"
    # what git cannot give, and what is never asked of it, is said, not raised
    bad = await _run(vscode, "graphlsp.renderRevision", path=str(model), rev="--output=/tmp/x")
    assert bad["error"] and "not a revision name" in bad["error"]
    gone = await _run(vscode, "graphlsp.renderRevision", path=str(repo / "new.onnx"), rev="HEAD")
    assert gone["error"] and "new.onnx" in gone["error"]
