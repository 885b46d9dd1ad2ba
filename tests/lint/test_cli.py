"""`graphlsp check` as pre-commit and CI use it: formats, exit codes, config, suppressions, fixes, cache."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.parser
import pytest

from graphlsp.cli import main
from graphlsp.lint.config import load_settings
from graphlsp.lint.docs import DOCS
from graphlsp.lint.rules import RULES
from graphlsp.lint.runner import check_files
from tests.conftest import EXAMPLES, missing, offline, shared

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
CLEAN = H + "g (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n"
UNUSED = H + "g (float[N] x) => (float[N] y) {\n  spare = Neg (x)\n  y = Relu (x)\n}\n"
MISSING_IMPORT = H + "g (float[N] x) => (float[N] y) {\n  y = com.acme.Gelu (x)\n}\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def test_every_rule_has_docs_and_every_example_triggers_its_rule() -> None:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_text

    assert set(DOCS) == set(RULES)
    for code, doc in DOCS.items():
        if doc.example:
            settings = Settings(targets=["onnxruntime:cuda"]) if code == "GL702" else Settings()  # a GPU-only rule
            assert code in {d.code for d in lint_text(doc.example, "example.onnxtxt", settings)[1]}, code


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = write(tmp_path, "clean.onnxtxt", CLEAN)
    broken = write(tmp_path, "broken.onnxtxt", H + "g (float[N] x) => (float[N] y) {\n  y = Relu (z)\n}\n")
    assert run(capsys, "check", "--no-cache", str(clean))[0] == 0
    assert run(capsys, "check", "--no-cache", str(broken))[0] == 1
    assert run(capsys, "check", "--no-cache", str(tmp_path / "missing.onnxtxt"))[0] == 2
    with pytest.raises(SystemExit) as e:
        main(["check", "--format", "yaml"])
    assert e.value.code == 2
    warn = write(tmp_path, "warn.onnxtxt", UNUSED)
    assert run(capsys, "check", "--no-cache", str(warn))[0] == 0
    assert run(capsys, "check", "--no-cache", "--strict", str(warn))[0] == 1


def test_a_file_that_cannot_be_checked_is_never_reported_as_passing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import graphlsp.lint.runner as runner

    clean = write(tmp_path, "clean.onnxtxt", CLEAN)

    def crash(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "check_file", crash)
    code, out, err = run(capsys, "check", "--no-cache", "-j", "1", str(clean))
    assert code == 2
    assert "internal error: RuntimeError: boom" in err
    assert "All checks passed" not in out and "1 of 1 file could not be checked" in out


def test_text_output_has_source_line_caret_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "m.onnxtxt", H + "g (float[N] x) => (float[N] y) {\n  y = Relu (zz)\n}\n")
    code, out, _ = run(capsys, "check", "--no-cache", str(p))
    assert f"{p}:3:13: error: GL201 " in out
    assert "3 |   y = Relu (zz)" in out
    assert "  | " + " " * 12 + "^^\n" in out
    assert out.rstrip().endswith("Found 1 error in 1 file.")
    assert "\033[" not in out  # no colour when not on a terminal


def test_json_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLES / "broken.onnxtxt", tmp_path)
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(tmp_path / "broken.onnxtxt"))
    data = json.loads(out)
    assert json.loads(json.dumps(data)) == data
    keys = {"file", "line", "col", "end_line", "end_col", "severity", "code", "name", "message"}
    assert data and all(keys <= set(d) for d in data)
    assert all(d["severity"] in ("error", "warning", "info", "hint") for d in data)


def test_sarif_validates_against_the_official_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = shared("schemas", "sarif-schema-2.1.0.json")
    shutil.copy(EXAMPLES / "broken.onnxtxt", tmp_path)
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "sarif", str(tmp_path / "broken.onnxtxt"))
    log = json.loads(out)
    jsonschema.validate(log, json.loads(schema_path.read_text()))
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"GL201", "GL101"}
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


GITHUB = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),"
                    r"title=(GL\d{3})::(.*)$")  # fmt: skip


def test_github_lines_parse_and_escape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "a,b:c.onnxtxt", H + "g (float[N] x) => (float[N] y) {\n  y = Relu (\"50%\")\n}\n")
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "github", str(p))
    lines = out.splitlines()
    assert lines
    for line in lines:
        m = GITHUB.match(line)
        assert m, line
        assert "%2C" in m.group(2) and "%3A" in m.group(2)
    assert any("50%25" in line for line in lines)


def test_config_select_ignore_severity_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "m.onnxtxt", UNUSED)
    (tmp_path / "legacy").mkdir()
    write(tmp_path / "legacy", "old.onnxtxt", UNUSED)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.graphlsp]\nseverity = { unused-value = "error" }\nper-file-ignores = { "legacy/*" = ["GL207"] }\n'
    )
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(tmp_path))
    data = json.loads(out)
    assert [(Path(d["file"]).name, d["code"], d["severity"]) for d in data] == [("m.onnxtxt", "GL207", "error")]
    assert code == 1
    (tmp_path / "graphlsp.toml").write_text('ignore = ["GL2"]\n')  # graphlsp.toml wins over pyproject
    assert json.loads(run(capsys, "check", "--no-cache", "--format", "json", str(tmp_path))[1]) == []
    (tmp_path / "graphlsp.toml").write_text("colour = 3\n")
    code, _, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 2 and "unknown setting" in err


def test_noqa_line_file_and_unused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = H + "g (float[N] x) => (float[N] y) {\n  spare = Neg (x)  # noqa: GL207\n  y = Relu (x)  # noqa: GL301\n}\n"
    p = write(tmp_path, "m.onnxtxt", line)
    data = json.loads(run(capsys, "check", "--no-cache", "--format", "json", str(p))[1])
    assert [(d["code"], d["line"]) for d in data] == [("GL501", 4)]
    write(tmp_path, "m.onnxtxt", "# graphlsp: noqa\n" + UNUSED)
    assert json.loads(run(capsys, "check", "--no-cache", "--format", "json", str(p))[1]) == []


def test_fix_and_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, "m.onnxtxt", MISSING_IMPORT.replace("y = com", "spare = Neg (x)\n  y = com"))
    before = p.read_text()
    code, out, _ = run(capsys, "check", "--no-cache", "--diff", str(p))
    assert code == 1 and p.read_text() == before
    assert "-  spare = Neg (x)" in out and "com.acme\" : 1" not in out  # importing a guessed version is unsafe
    code, out, _ = run(capsys, "check", "--no-cache", "--diff", "--unsafe-fixes", str(p))
    assert '+<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>' in out and "-  spare = Neg (x)" in out
    code, _, err = run(capsys, "check", "--no-cache", "--fix", str(p))
    assert "fixed 1 issue" in err and code == 1  # GL205 is left
    assert p.read_text() == before.replace("  spare = Neg (x)\n", "")
    code, _, err = run(capsys, "check", "--no-cache", "--fix", "--unsafe-fixes", str(p))
    assert "fixed 1 issue" in err and code == 0
    assert p.read_text() == before.replace('["" : 21]', '["" : 21, "com.acme" : 1]').replace("  spare = Neg (x)\n", "")


def test_safe_fixes_keep_comments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The unused node goes, the comment on its line stays; a node with a comment inside it is only removed by
    --unsafe-fixes."""
    text = H + (
        "g (float[N] x, bool c) => (float[N] y) {\n"
        "  spare = Neg (x)   # why: kept for the next version\n"
        "  other = If (c) <then_branch = t () => (float[N] a) {\n"
        "    a = Neg (x)  # inside\n"
        "  }, else_branch = e () => (float[N] b) { b = Abs (x) }>\n"
        "  y = Relu (x)\n"
        "}\n"
    )
    p = write(tmp_path, "m.onnxtxt", text)
    code, _, err = run(capsys, "check", "--no-cache", "--fix", str(p))
    fixed = p.read_text()
    assert "fixed 1 issue" in err
    assert fixed == text.replace("  spare = Neg (x)   # why", "  # why")
    code, _, err = run(capsys, "check", "--no-cache", "--fix", "--unsafe-fixes", str(p))
    assert "fixed 1 issue" in err and code == 0
    assert "other" not in p.read_text() and "# why: kept for the next version" in p.read_text()


def test_binary_models_are_linted_by_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = onnx.parser.parse_model(H + "g (float[N] x) => (float[N] y) {\n  y = Relu (z)\n}\n")
    onnx.save(model, tmp_path / "m.onnx")
    code, out, _ = run(capsys, "check", "--no-cache", str(tmp_path / "m.onnx"))
    assert f"{tmp_path / 'm.onnx'}: node 0 (Relu): error: GL201 " in out and code == 1
    assert "graphlsp convert" not in out  # binaries are read from protobuf, not linted through a printout


def test_cache_skips_unchanged_files(tmp_path: Path) -> None:
    p = write(tmp_path, "m.onnxtxt", UNUSED)
    (tmp_path / "graphlsp.toml").write_text("")
    settings = load_settings(tmp_path)
    first = check_files([str(p)], settings, jobs=1)
    second = check_files([str(p)], settings, jobs=1)
    assert not first[0].cached and second[0].cached
    assert [d.to_json() for d in first[0].diagnostics] == [d.to_json() for d in second[0].diagnostics]
    p.write_text(CLEAN)
    third = check_files([str(p)], settings, jobs=1)
    assert not third[0].cached and third[0].diagnostics == []


def test_broken_example_every_planted_error_found_at_its_line() -> None:
    text = (EXAMPLES / "broken.onnxtxt").read_text()
    planted = {i + 1: m.group(1) for i, line in enumerate(text.splitlines()) if (m := re.search(r"# expect: ([a-z-]+)$", line))}
    [result] = check_files([str(EXAMPLES / "broken.onnxtxt")], load_settings(EXAMPLES), jobs=1, cache=False)
    found: dict[int, set[str]] = {}
    for d in result.diagnostics:
        found.setdefault(d.line, set()).add(d.name)
    kind_to_names = {
        "syntax-error": {"syntax-error"}, "undefined-value": {"undefined-value"},
        "duplicate-definition": {"duplicate-definition"}, "unknown-op": {"unknown-op"},
        "missing-opset-import": {"missing-opset-import"}, "duplicate-node-label": {"duplicate-node-label"},
        "unused-value": {"unused-value"}, "output-never-produced": {"output-never-produced"},
        "matmul-shape-mismatch": {"contraction-mismatch"}, "broadcast-mismatch": {"broadcast-incompatible"},
        "reshape-element-count": {"reshape-element-count"}, "wrong-attribute-type": {"attribute-type"},
    }  # fmt: skip
    for line, kind in planted.items():
        assert kind_to_names[kind] & found.get(line, set()), (line, kind, found.get(line))


@pytest.mark.parametrize("name", ["gpt_L24.onnxtxt", "gpt_L96.onnxtxt"])
def test_shared_bench_models_have_no_errors(name: str) -> None:
    path = shared("bench", name)
    [result] = check_files([str(path)], load_settings(path), jobs=1, cache=False)
    assert [d for d in result.diagnostics if d.severity == "error"] == []


def test_pre_commit_try_repo(tmp_path: Path) -> None:
    """The hooks work through pre-commit itself, on a temporary git repository."""
    if shutil.which("git") is None:
        missing("git is not installed (pre-commit runs the hooks from a git repository)")
    pytest.importorskip("pre_commit")
    repo = Path(__file__).resolve().parents[2]
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "good.onnxtxt").write_text(CLEAN)
    (work / "bad.onnxtxt").write_text(H + "g (float[N] x) => (float[N] y) {\n  y = Relu (z)\n}\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
           "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "graphlsp-check", "--all-files"],
        cwd=work, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    if proc.returncode not in (0, 1) and offline(output):
        missing(f"PyPI is unreachable: pre-commit installs the hook's environment from it ({output.strip()[-300:]})")
    assert proc.returncode == 1, output
    assert "bad.onnxtxt:3:13: error: GL201" in output
    assert "good.onnxtxt" not in output.split("graphlsp check")[-1].replace("Passed", "")
