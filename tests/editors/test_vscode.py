"""The VS Code extension: editors/vscode/build.sh (npm ci, tsc, esbuild, grammar tests, node tests including a
session with the real server, vsce package) when node >= 20 and npm are there and the npm registry answers; skipped
with the reason otherwise (a failure in CI: tests/conftest.py's `missing`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import missing

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
SERVER = [sys.executable, "-m", "graphlsp.cli", "serve"]
BUILD_TIMEOUT = 900  # seconds: npm ci from the registry is most of it


def node_problem() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node and npm are needed to build the VS Code extension: " + ("no node" if node is None else "no npm")
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"node does not run: {e}"
    m = re.match(r"v(\d+)\.", version)
    if not m or int(m[1]) < 20:
        return f"the VS Code extension's build needs node >= 20 (@vscode/vsce 3), found {version or 'nothing'}"
    return ""


def registry_problem() -> str:
    """Why the npm registry (npm's configured one) cannot be reached, or "": build.sh's `npm ci` fetches there."""
    import urllib.error
    import urllib.request

    try:
        url = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True,
                             timeout=60).stdout.strip() or "https://registry.npmjs.org/"  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        url = "https://registry.npmjs.org/"
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/-/ping", timeout=15) as reply:
            reply.read(1024)
    except urllib.error.HTTPError:
        return ""  # it answered
    except (OSError, ValueError) as e:
        return f"the npm registry ({url}) is unreachable, and build.sh's npm ci fetches the extension's packages there: {e}"
    return ""


def test_lockfile_matches_manifest() -> None:
    manifest = json.loads((EXT / "package.json").read_text())
    lock = json.loads((EXT / "package-lock.json").read_text())
    root = lock["packages"][""]
    assert root.get("dependencies", {}) == manifest.get("dependencies", {})
    assert root.get("devDependencies", {}) == manifest.get("devDependencies", {})
    ignored = (EXT / ".gitignore").read_text().split()
    assert {"node_modules/", "out/", "*.vsix"} <= set(ignored)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    problem = node_problem() or registry_problem()
    if problem:
        missing(problem)
    log = tmp_path_factory.mktemp("vscode") / "build.log"
    env = {**os.environ, "GRAPHLSP_SERVER": json.dumps(SERVER)}
    with log.open("wb") as out:
        proc = subprocess.Popen(["bash", str(EXT / "build.sh")], cwd=EXT, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:
            rc = proc.wait(timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            pytest.fail(f"build.sh did not finish within {BUILD_TIMEOUT} s:\n{log.read_text(errors='replace')[-5000:]}")
    return rc, log.read_text(errors="replace")


def test_build_script_passes(build: tuple[int, str]) -> None:
    rc, output = build
    assert rc == 0, output[-6000:]


def test_grammar_tests_ran(build: tuple[int, str]) -> None:
    _, output = build
    cases = sorted(p.name for p in (EXT / "test" / "grammar").glob("*.test.onnx*"))
    assert len(cases) >= 6 and "library.test.onnxop" in cases
    for case in cases:
        assert f"✓ test/grammar/{case} run successfuly" in output, output[-6000:]


def test_node_tests_ran_with_the_real_server(build: tuple[int, str]) -> None:
    _, output = build
    counts = dict(re.findall(r"^# (pass|fail|skipped) (\d+)$", output, re.M))
    assert counts.get("fail") == "0" and counts.get("skipped") == "0", output[-6000:]
    assert int(counts.get("pass", 0)) >= 16
    for name in ("the real server, configured like the extension does it",
                 "a binary model as the extension opens it: a graphlsp-view: document",
                 "*.onnx opens as a read-only text view: custom editor, view scheme, activation",
                 "the bundled extension activates, starts the server and registers its providers",
                 "Show Graph with the real server: open, update after edit, cursor sync, reveal"):  # fmt: skip
        assert re.search(rf"^ok \d+ - {re.escape(name)}$", output, re.M), output[-6000:]


def test_vsix_contents(build: tuple[int, str]) -> None:
    rc, output = build
    assert rc == 0, output[-3000:]
    version = json.loads((EXT / "package.json").read_text())["version"]
    vsix = EXT / f"graphlsp-{version}.vsix"
    assert vsix.exists()
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert {"extension/package.json", "extension/out/extension.js", "extension/syntaxes/onnxtxt.tmLanguage.json",
            "extension/language-configuration.json", "extension/readme.md", "extension/syntaxes/onnxop.tmLanguage.json",
            "extension/language-configuration-onnxop.json"} <= names  # fmt: skip
    assert not any(n.startswith(("extension/node_modules/", "extension/src/", "extension/test/")) for n in names)
    assert manifest["contributes"]["languages"][0]["extensions"] == [".onnxtxt", ".onnxtext"]
    assert manifest["contributes"]["languages"][1]["extensions"] == [".onnxop"]  # op libraries
    # binary models: *.onnx opens as the server's read-only text view
    [editor] = manifest["contributes"]["customEditors"]
    assert editor["selector"] == [{"filenamePattern": "*.onnx"}] and editor["priority"] == "default"
    assert "onFileSystem:graphlsp-view" in manifest["activationEvents"]
