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
    (["check", "loop1.onnxtxt"], "loop1.onnxtxt: too many levels of symbolic links"),
    (["shapes", "loop1.onnxtxt"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["fold", "loop1.onnxtxt"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["convert", "loop1.onnxtxt", "x.onnx"], "loop1.onnxtxt: Too many levels of symbolic links"),
    (["check", "-j", "-3", "a.onnxtxt"], "argument -j/--jobs: -3: must be 0 (one per core) or more"),
    (["serve", "--tcp", "junk"], "argument --tcp: 'junk' is not HOST:PORT (e.g. 127.0.0.1:2087)"),
    (["serve", "--tcp", "localhost:70000"], "argument --tcp: 'localhost:70000' is not HOST:PORT"),
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
