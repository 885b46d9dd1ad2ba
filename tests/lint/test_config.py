"""Config files that are not what graphlsp reads: each is a ConfigError naming the file, never an internal error,
in `check` (exit 2 with the message) and in the editor (the message shown, the folder's diagnostics go on with the
default settings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphlsp.cli import main
from graphlsp.lint.config import ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[2]
MODEL = (ROOT / "examples" / "broken.onnxtxt").read_text()

BROKEN_CONFIGS: dict[str, tuple[str, bytes]] = {
    "utf16": ("pyproject.toml", '[tool.graphlsp]\nignore = ["GL2"]\n'.encode("utf-16")),
    "latin1": ("pyproject.toml", '[tool.graphlsp]\nignore = ["caf\xe9"]\n'.encode("latin-1")),
    "tool-int": ("pyproject.toml", b"tool = 5\n"),
    "graphlsp-int": ("pyproject.toml", b"[tool]\ngraphlsp = 5\n"),
    "pfi-int-codes": ("pyproject.toml", b'[tool.graphlsp]\nper-file-ignores = { "*.onnxtxt" = [301] }\n'),
    "absolute-glob": ("graphlsp.toml", b'op-libraries = ["/nonexistent-graphlsp/*.onnxop"]\n'),
    "nested": ("graphlsp.toml", b"select = " + b"[" * 5000 + b"]" * 5000 + b"\n"),
    "cap-bool": ("graphlsp.toml", b"fold-size-cap = true\n"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_CONFIGS))
def test_a_broken_config_is_a_config_error(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, data = BROKEN_CONFIGS[case]
    (tmp_path / name).write_bytes(data)
    (tmp_path / "m.onnxtxt").write_text(MODEL)
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path)
    assert str(e.value).startswith(str(tmp_path / name))
    assert main(["check", "--no-cache", str(tmp_path / "m.onnxtxt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"graphlsp: error: {tmp_path / name}") and "internal error" not in err, err


def test_an_absolute_glob_in_op_libraries_is_a_config_error_in_a_project_and_fine_in_the_users_own(
    tmp_path: Path,
) -> None:
    """A project's config names files inside its folder (docs/security.md); `--config` is the user's own file."""
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "a.onnxop").write_text("")
    (tmp_path / "graphlsp.toml").write_text(f'op-libraries = ["{tmp_path}/ops/*.onnxop"]\n')
    with pytest.raises(ConfigError, match="is an absolute path"):
        load_settings(tmp_path)
    assert load_settings(tmp_path, user=True).op_libraries == [str(tmp_path / "ops" / "a.onnxop")]


def test_a_config_read_before_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse of a config file is kept by its bytes: the same bytes are not parsed again, changed ones are
    (even of the same size, written within the same clock tick)."""
    from graphlsp.lint import config

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.graphlsp]\nignore = ["GL207"]\n')
    assert load_settings(project).ignore == ["GL207"]
    parsed = []
    parse = config._parse
    monkeypatch.setattr(config, "_parse", lambda path, data: parsed.append(path) or parse(path, data))
    assert load_settings(project).ignore == ["GL207"]
    assert parsed == []
    (project / "pyproject.toml").write_text('[tool.graphlsp]\nignore = ["GL210"]\n')  # same size
    assert load_settings(project).ignore == ["GL210"]
    assert len(parsed) == 1
    (project / "pyproject.toml").write_text("tool = 5\n")  # kept or not, still an error
    for _ in range(2):
        with pytest.raises(ConfigError):
            load_settings(project)
