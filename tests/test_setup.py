"""A new user's first hour: `make run` installs what graphlsp runs on and no more, `pip install .` builds one wheel
that holds every package and data file with no packaging warning, and a test that needs something not here skips
with the reason named, except in CI, where it fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT, missing, needs, offline, pytest_runtest_setup, shared


# ---- missing resources: named skips, failures in CI
@pytest.mark.parametrize("ci", ["", "false", "true"])
def test_a_missing_resource_skips_with_its_reason_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci == "true" else pytest.skip.Exception
    with pytest.raises(outcome, match="the npm registry is unreachable"):
        missing("the npm registry is unreachable")
    with pytest.raises(outcome, match=r"\.\./shared/nothing/here\.onnx is not here"):
        shared("nothing", "here.onnx")
    item = SimpleNamespace(iter_markers=lambda name: [needs([], "../shared/realworld is not here").mark])
    with pytest.raises(outcome, match="realworld is not here"):
        pytest_runtest_setup(item)  # type: ignore[arg-type]
    item = SimpleNamespace(iter_markers=lambda name: [needs(["m.onnx"], "never said").mark])
    pytest_runtest_setup(item)  # type: ignore[arg-type]  # present: runs


def test_an_unreachable_npm_registry_is_a_named_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.error
    import urllib.request

    from tests.editors import test_vscode

    def offline(*args: object, **kwargs: object) -> None:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    problem = test_vscode.registry_problem()
    assert problem.startswith("the npm registry (") and "unreachable" in problem and "name resolution" in problem


# ---- make run: run-time dependencies only
def test_make_run_installs_the_runtime_only_and_make_test_the_toolchain(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    run = subprocess.run(["make", "-n", "run"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    test = subprocess.run(["make", "-n", "test"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "pip install --quiet -e .\n" in run and "[test]" not in run
    assert "pip install --quiet -e '.[test]'" in test


# ---- pip install .: one wheel, everything in it, no warning
@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    import shutil

    out = tmp_path_factory.mktemp("dist")
    clone = tmp_path_factory.mktemp("clone") / "graphlsp"  # as a fresh clone has it: no build/ left from before
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(".*", "build", "dist", "node_modules", "__pycache__",
                                                               "*.egg-info", "corpus", "bench"))  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", str(out)], cwd=clone,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    log = proc.stdout + proc.stderr
    if proc.returncode != 0 and offline(log):
        missing(f"PyPI is unreachable: building the wheel needs setuptools from it ({log.strip()[-300:]})")
    assert proc.returncode == 0, log[-4000:]
    wheels = list(out.glob("*.whl"))
    assert [w.name for w in wheels] == ["graphlsp-0.1.0-py3-none-any.whl"]  # the README's command: graphlsp only
    return wheels[0], log


def test_the_wheel_builds_without_a_packaging_warning(wheel: tuple[Path, str]) -> None:
    _, log = wheel
    warnings = [line for line in log.splitlines() if re.search(r"(?i)warning|deprecat", line)
                and "is ignored: it is neither a file nor a directory" not in line]  # (this machine's pip config)
    assert warnings == [], "\n".join(warnings)


def test_the_wheel_holds_every_package_data_file_and_the_license(wheel: tuple[Path, str]) -> None:
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    # every file of the package: its modules and its data (op libraries, kernel tables, the graph page's assets)
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "graphlsp").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}  # fmt: skip
    assert sources <= names, sorted(sources - names)
    libraries = {f"graphlsp/oplib/libraries/{p.name}" for p in (ROOT / "graphlsp/oplib/libraries").glob("*.onnxop")}
    assert libraries and libraries <= names
    assert {f"graphlsp/grammar/{p.name}" for p in (ROOT / "grammar").glob("*.lark")} <= names
    assert "graphlsp-0.1.0.dist-info/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(path).read("graphlsp-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata and "Summary: Language server and linter for ONNX models" in metadata


def test_license_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text) > 10_000


def test_help_says_onnx_models_binary_and_text() -> None:
    out = subprocess.run([sys.executable, "-m", "graphlsp.cli", "--help"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "200"}).stdout  # fmt: skip
    assert "Language server and linter for ONNX models (binary .onnx and ONNX text)" in out
    assert "ONNX text files" not in out


@pytest.mark.parametrize("part", ["realworld", "bench", "schemas", "tools"])
def test_shared_resources_are_here(part: str) -> None:
    """Tests parametrized over ../shared's models have no case at all without it: this names the gap outside CI
    and fails in CI."""
    assert any(shared(part).iterdir())


def test_pip_without_an_index_reads_as_offline(tmp_path: Path) -> None:
    """The words pip uses when it cannot reach an index make a named skip; a build that fails does not."""
    proc = subprocess.run([sys.executable, "-m", "pip", "--isolated", "download", "--no-index", "--no-deps", "-d", str(tmp_path),
                           "setuptools>=77"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode != 0 and offline(proc.stdout + proc.stderr)
    assert not offline("error: package directory './graphlsp/grammar' does not exist")
