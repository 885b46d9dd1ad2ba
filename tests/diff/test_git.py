"""git with docs/diff.md's set-up: `git diff` of two commits of a binary model runs `graphlsp diff` (git's external
diff driver, seven arguments), and `git log -p` (or `git diff --no-ext-diff`) shows textconv's text diff."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx

from tests.conftest import ROOT, missing

CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"


def setup_lines() -> list[str]:
    """The set-up as docs/diff.md shows it (the three lines in its first ```sh block)."""
    text = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_git_diff_and_log_show_models_as_text(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        missing("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    lines = setup_lines()
    assert len(lines) == 3
    env_path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for line in lines:  # as a user types them (graphlsp on the PATH: the venv's)
        subprocess.run(line, shell=True, cwd=repo, check=True, env={**os.environ, "PATH": env_path,
                                                                    "HOME": str(tmp_path)})  # fmt: skip
    shutil.copy(CNN, repo / "model.onnx")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    m = onnx.load(str(CNN))
    node = next(n for n in m.graph.node if n.op_type == "Softmax")
    next(a for a in node.attribute if a.name == "axis").i = 0
    onnx.save(m, str(repo / "model.onnx"))
    git(repo, "commit", "-qam", "two")
    semantic = git(repo, "diff", "HEAD~1", "HEAD")
    assert "--- a/model.onnx" in semantic and "~ node_softmax (Softmax): attribute axis: -1 -> 0" in semantic
    text = git(repo, "log", "-p", "-1")
    assert "-   probs = Softmax <axis: int = -1> (" in text.replace("\n", "\n") or "axis: int = -1" in text
    minus = [x for x in text.splitlines() if x.startswith("-") and "Softmax" in x]
    plus = [x for x in text.splitlines() if x.startswith("+") and "Softmax" in x]
    assert len(minus) == len(plus) == 1 and "axis: int = 0" in plus[0] and "axis: int = -1" in minus[0]
    assert "Binary files" not in text
    same = git(repo, "diff", "--no-ext-diff", "HEAD~1", "HEAD")
    assert same.count("\n-") >= 1 and "axis: int = 0" in same
    # the first commit adds the model: git gives the driver /dev/null for the old side
    added = git(repo, "show", "--ext-diff", "--format=", "HEAD~1")
    assert "--- a/model.onnx" in added and "+ node_softmax (Softmax)" in added and "nodes: 0 matched" in added
