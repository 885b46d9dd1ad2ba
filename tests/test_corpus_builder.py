"""The corpus builder (`corpus/build.py`, the package `corpus/`): its entry points list, with no exporter installed,
every target that made a committed model, each family module contributing its targets."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

CORPUS = ROOT / "corpus"


def _list(*cmd: str) -> list[list[str]]:
    out = subprocess.run([sys.executable, *cmd, "--list"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line.split() for line in out.stdout.splitlines()]


def test_both_entry_points_list_every_target_of_the_manifest() -> None:
    rows = _list(str(CORPUS / "build.py"))
    assert rows == _list("-m", "corpus")
    names = [r[0] for r in rows]
    assert len(names) == len(set(names))
    manifest = json.loads((CORPUS / "models" / "MANIFEST.json").read_text())["models"]
    built = {m["target"] for m in manifest}
    assert built <= set(names), built - set(names)
    groups = {r[0]: r[1] for r in rows}
    assert {groups[n] for n in ("tf2onnx-cnn", "tf2onnx-lstm")} == {"tf"} and groups["paddle2onnx-cnn"] == "paddle"


def test_every_family_module_registers_targets() -> None:
    code = ("import json; from corpus.registry import FAMILIES, load_targets; "
            "print(json.dumps([FAMILIES, sorted({t.fn.__module__ for t in load_targets()})]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    families, modules = json.loads(out)
    assert modules == sorted(f"corpus.{f}" for f in families)
    assert {p.stem for p in CORPUS.glob("from_*.py")} == set(families)


def test_an_unknown_target_is_refused() -> None:
    r = subprocess.run([sys.executable, str(CORPUS / "build.py"), "--only", "no-such-target"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown targets: no-such-target" in r.stderr
