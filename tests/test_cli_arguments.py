"""The command line's arguments that name no usable file, folder, number or address: each is a usage error (exit 2,
a message naming it), never an internal error, and never a write over the input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphlsp.cli import main

ROOT = Path(__file__).resolve().parents[1]
MLP = ROOT / "examples" / "mlp.onnxtxt"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(MLP, tmp_path / "a.onnxtxt")
    shutil.copy(ROOT / "examples" / "cnn_block.onnxtxt", tmp_path / "b.onnxtxt")
    (tmp_path / "sub").mkdir()
    (tmp_path / "dir.onnx").mkdir()
    (tmp_path / "loop1.onnxtxt").symlink_to(tmp_path / "loop2.onnxtxt")
    (tmp_path / "loop2.onnxtxt").symlink_to(tmp_path / "loop1.onnxtxt")
    return tmp_path


CASES = [
    (["fold", "a.onnxtxt", "-o", "nodir/x.onnxtxt"], "nodir/x.onnxtxt: cannot be written: there is no folder nodir"),
    (["fold", "a.onnxtxt", "-o", "sub"], "sub: is a folder; name the file to write"),
    (["convert", "a.onnxtxt", "nodir/x.onnx"], "nodir/x.onnx: cannot be written: there is no folder nodir"),
    (["convert", "a.onnxtxt", "dir.onnx"], "dir.onnx: is a folder; name the file to write"),
    (["convert", "a.onnxtxt", "a.onnxtxt"], "a.onnxtxt: is the input a.onnxtxt; write the output to another file"),
    (["convert", "a.onnxtxt", "./sub/../a.onnxtxt"], "./sub/../a.onnxtxt: is the input a.onnxtxt; write the output"),
    (["check", "loop1.onnxtxt"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["shapes", "loop1.onnxtxt"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["fold", "loop1.onnxtxt"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["convert", "loop1.onnxtxt", "x.onnx"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["check", "-j", "-3", "a.onnxtxt"], "argument -j/--jobs: -3: must be 0 (one per core) or more"),
    (["serve", "--tcp", "junk"], "--tcp junk: expected HOST:PORT with a port number from 0 to 65535"),
    (["serve", "--tcp", "localhost:70000"], "--tcp localhost:70000: expected HOST:PORT"),
]


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_an_unusable_argument_is_a_usage_error(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], argv: list[str],
                                               message: str) -> None:  # fmt: skip
    monkeypatch.chdir(folder)
    before = (folder / "a.onnxtxt").read_bytes()
    try:
        code = main(argv)
    except SystemExit as e:  # argparse
        code = int(e.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "internal error" not in err, err
    assert (folder / "a.onnxtxt").read_bytes() == before
    assert not (folder / "nodir").exists()


def test_more_jobs_than_files_is_a_worker_per_file(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """-j beyond a C int was an OverflowError; -j 100000 started 100,000 processes for two files."""
    import graphlsp.lint.runner as runner

    started: list[int] = []
    real = runner.ProcessPoolExecutor

    def pool(max_workers: int):  # type: ignore[no-untyped-def]
        started.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(runner, "ProcessPoolExecutor", pool)
    monkeypatch.chdir(folder)
    assert main(["check", "--no-cache", "-j", "99999999999999999999", "a.onnxtxt", "b.onnxtxt"]) == 0
    assert started == [2]


@pytest.mark.parametrize("argv", [["check", "a\0b.onnxtxt"], ["check", "x" * 300 + ".onnxtxt"],
                                  ["shapes", "x" * 300 + ".onnxtxt"], ["fold", "a\0b.onnxtxt"],
                                  ["convert", "a\0b.onnxtxt", "x.onnx"], ["convert", "a.onnxtxt", "x\0.onnx"]])  # fmt: skip
def test_a_path_no_file_can_have_is_a_usage_error(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:  # fmt: skip
    """A NUL, or a name longer than the system takes: found by `make fuzz` (ValueError from pathlib, OSError
    ENAMETOOLONG from the config search)."""
    monkeypatch.chdir(folder)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("graphlsp: error: ") and "internal error" not in err, err


_CHECK_LINES = [
    [], ["a.onnx"], ["--no-cache", "--quiet", "a.onnx"], ["a.onnx", "b.onnxtxt", "-q"], ["--format", "json", "x"],
    ["--format", "github", "."], ["x", "--format", "sarif", "--strict"], ["--fix", "--diff", "--unsafe-fixes", "m"],
    ["--show-hints", "--no-color", "a", "b", "c"], ["--format", "xml", "a"], ["a", "--quiet", "b"], ["-"],
    ["--no-c", "a"], ["--", "a"], ["-q", "-q", "a"], ["--select", "GL3", "a"], ["-j", "2", "a"], ["--format"],
    ["--format=json", "a"], ["a", "--dim", "batch=2"], ["--target", "onnxruntime:cuda", "a"], ["-qa"], ["a", "-"],
]  # fmt: skip


@pytest.mark.parametrize("line", _CHECK_LINES, ids=lambda line: " ".join(line) or "(none)")
def test_the_check_line_read_without_argparse_is_argparse_s(line: list[str]) -> None:
    from graphlsp import cli
    from graphlsp.cli_parser import build_parser

    fast = cli._plain_check(["check", *line])
    try:
        full = vars(build_parser(cli._FUNCS).parse_args(["check", *line]))
    except SystemExit:
        full = None  # argparse refuses it and says why: the fast path must leave it to argparse
    if fast is None:
        return  # argparse parses it (and explains a mistake), as before
    assert full is not None and vars(fast) == full


def test_the_common_check_lines_need_no_argparse() -> None:
    from graphlsp import cli

    for line in (["a.onnx"], ["--no-cache", "--quiet", "a.onnx"], ["--format", "github", "."], []):
        assert cli._plain_check(["check", *line]) is not None


_FOLD_LINES = [
    ["a.onnxtxt"], ["a.onnxtxt", "-o", "b.onnxtxt"], ["-o", "b.onnxtxt", "a.onnxtxt"], ["a", "--output", "b"],
    ["a", "-o", "-"], ["a", "-o", "b", "-o", "c"], ["a", "b"], [], ["a", "-o"], ["a", "--size-cap", "9"], ["-"],
    ["a", "-ob"], ["a", "--output=b"], ["--", "a"], ["a", "--out", "b"],
]  # fmt: skip


@pytest.mark.parametrize("line", _FOLD_LINES, ids=lambda line: " ".join(line) or "(none)")
def test_the_fold_line_read_without_argparse_is_argparse_s(line: list[str]) -> None:
    from graphlsp import cli
    from graphlsp.cli_parser import build_parser

    fast = cli._plain_fold(["fold", *line])
    try:
        full = vars(build_parser(cli._FUNCS).parse_args(["fold", *line]))
    except SystemExit:
        full = None
    if fast is None:
        return
    assert full is not None and vars(fast) == full


def test_the_common_fold_lines_need_no_argparse() -> None:
    from graphlsp import cli

    for line in (["a.onnxtxt"], ["a.onnxtxt", "-o", "b.onnxtxt"], ["-o", "b.onnx", "a.onnx"]):
        assert cli._plain_fold(["fold", *line]) is not None


_BLAS_PROBE = """
import os, sys
import graphlsp.cli as cli

def probe(args):
    import numpy  # noqa: F401  # OpenBLAS starts its threads here
    tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    print(tasks, os.environ.get("OPENBLAS_NUM_THREADS"))
    return 0

cli._run = probe
sys.argv = ["graphlsp", "fold", "model.onnxtxt"]
cli.main()
"""


def test_a_command_starts_one_blas_thread_unless_the_user_chose() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"]  # the process's only thread: numpy's products are small here
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "2"
