"""`graphlsp check` in CI: binary data read as text, typos in rule codes, hints, severity words, grouped findings,
and the other commands' edges (a missing file, a bad address, `shapes --format json`, `--fix` on a binary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphlsp.cli import main
from tests.lint.test_output_binary import _stdin, broken_model

H = '<ir_version: 10, opset_import: ["" : 21]>\n'


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


# ---- binary data read as text
def test_a_binary_model_on_stdin_without_a_name_is_one_finding_with_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _stdin(monkeypatch, broken_model().SerializeToString())
    code, out, _ = run(capsys, "check", "--format", "concise", "-")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert lines[0].startswith("-:1:1: error: GL105 this is a binary ONNX model (protobuf), not ONNX text")
    assert "--stdin-filename model.onnx" in lines[0]


def test_a_binary_model_named_bin_is_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(broken_model().SerializeToString())
    code, out, _ = run(capsys, "check", "--no-cache", str(path))
    assert code == 1
    assert out.count("GL105") == 1 and "binary ONNX model" in out and "GL101" not in out
    assert len(out.splitlines()) < 10 and "Found 1 error in 1 file." in out


def test_other_binary_data_is_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import random

    data = bytes(random.Random(7).randrange(256) for _ in range(20_000)) + b"\0"
    (tmp_path / "noise.onnxtxt").write_bytes(data)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(tmp_path / "noise.onnxtxt"))
    assert code == 1 and out.count("GL105") == 1 and "binary data, not ONNX text" in out
    assert len(out.splitlines()) == 2


def test_a_few_bad_bytes_in_text_still_parse_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = H + "# caf\xe9\ng (float[N] x) => (float[N] y) {\n  y = Relu (zz)\n}\n"
    (tmp_path / "latin1.onnxtxt").write_bytes(text.encode("latin-1"))
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(tmp_path / "latin1.onnxtxt"))
    assert code == 1 and "GL105" in out and "GL201" in out  # the text is still checked


# ---- rule codes and names: a typo is an error, never silently "All checks passed"
CLEAN = H + "g (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n"
BROKEN = H + "g (float[N] x) => (float[N] y) {\n  y = Relu (zz)\n}\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--select", "GL9999"], "--select: unknown rule code or name 'GL9999'"),
        (["--ignore", "unused-vale"], "did you mean unused-value"),
        (["--select", "GL3O1"], "did you mean GL301"),
        (["--select", "GL201,undefind-value"], "'undefind-value' (did you mean undefined-value"),
    ],
)
def test_unknown_codes_on_the_command_line_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    p = tmp_path / "m.onnxtxt"
    p.write_text(BROKEN)
    code, out, err = run(capsys, "check", "--no-cache", *args, str(p))
    assert code == 2 and said in err and "All checks passed" not in out


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('select = ["GL3O1"]', "select: unknown rule code or name 'GL3O1' (did you mean GL301"),
        ('ignore = ["GL9999"]', "ignore: unknown rule code or name 'GL9999'"),
        ('severity = { unused-vale = "error" }', "severity: unknown rule code or name 'unused-vale'"),
        ('severity = { GL2 = "error" }', "severity: unknown rule code or name 'GL2'"),  # severity takes no prefix
        ('per-file-ignores = { "*.onnxtxt" = ["GL20l"] }', "per-file-ignores '*.onnxtxt': unknown rule code"),
    ],
)
def test_unknown_codes_in_config_are_config_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, said: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.graphlsp]\n{config}\n")
    p = tmp_path / "m.onnxtxt"
    p.write_text(BROKEN)
    code, out, err = run(capsys, "check", "--no-cache", str(p))
    assert code == 2 and said in err and "All checks passed" not in out


def test_known_codes_names_and_prefixes_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "graphlsp.toml").write_text(
        'select = ["GL", "GL2", "GL301", "unused-value"]\nignore = ["GL4"]\nseverity = { GL207 = "error", '
        'undefined-value = "warning" }\nper-file-ignores = { "x/*" = ["GL3", "syntax-error"] }\n'
    )
    p = tmp_path / "m.onnxtxt"
    p.write_text(BROKEN)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", "--ignore", "GL30,contraction-mismatch",
                       str(p))  # fmt: skip
    assert code == 0 and ": warning: GL201 " in out  # undefined-value made a warning


# ---- hints: the editor's, in the CLI only when asked
FOLDS = H + "g (float[24] x) => (float[3, 8] y) {\n  f = Constant <value = float[2] {2.2, 7.6}> ()\n" \
    "  c = Ceil (f)\n  t = Cast <to = 7> (c)\n  y = Reshape (x, t)\n}\n"  # fmt: skip


def _hints_file(tmp_path: Path) -> Path:
    p = tmp_path / "h.onnxtxt"
    p.write_text(FOLDS)
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_text

    assert any(d.severity == "hint" for d in lint_text(FOLDS, str(p), Settings())[1])  # there is one to hide
    return p


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_hints_are_hidden_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    import json

    def reported(out: str) -> str:  # SARIF describes every rule: its results are what it reports
        return json.dumps(json.loads(out)["runs"][0]["results"]) if fmt == "sarif" else out

    p = _hints_file(tmp_path)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, str(p))
    assert code == 0 and "GL401" not in reported(out)
    if fmt in ("text", "concise"):
        assert "All checks passed (1 file)." in out and "1 hint not shown: `--show-hints` shows it." in out
    if fmt == "json":
        assert json.loads(out) == []
    code, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, "--show-hints", str(p))
    assert "GL401" in reported(out) and "not shown" not in out
    if fmt in ("text", "concise"):
        assert "hint: GL401" in out and "Found 1 hint in 1 file." in out
    code, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, "--select", "GL401", str(p))
    assert "GL401" in reported(out) and "not shown" not in out
    code, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, "--select", "constant-foldable", str(p))
    assert "GL401" in reported(out)


def test_a_hint_raised_to_a_warning_in_config_is_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _hints_file(tmp_path)
    (tmp_path / "graphlsp.toml").write_text('severity = { GL401 = "warning" }\n')
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(p))
    assert ": warning: GL401 " in out and "not shown" not in out


def test_select_in_config_shows_hints_it_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _hints_file(tmp_path)
    (tmp_path / "graphlsp.toml").write_text('select = ["GL2", "GL4"]\n')
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(p))
    assert ": hint: GL401 " in out
    (tmp_path / "graphlsp.toml").write_text('select = ["GL"]\n')  # everything is not asking for hints
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(p))
    assert "GL401" not in out and "1 hint not shown" in out


# ---- severity in words, without a terminal
def test_severity_is_a_word_on_text_and_concise_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "m.onnxtxt"
    p.write_text(H + "g (float[N] x) => (float[N] y) {\n  spare = Neg (x)\n  y = Relu (zz)\n}\n")
    for fmt in ("text", "concise"):
        _, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, str(p))
        assert f"{p}:3:3: warning: GL207 " in out and f"{p}:4:13: error: GL201 " in out
        assert "\033[" not in out


# ---- one cause, one report
def _external_model(tmp_path: Path, tensors: int) -> Path:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = [numpy_helper.from_array(np.full(64, i, np.float32), f"w{i}") for i in range(tensors)]
    nodes = [helper.make_node("Add", ["x" if i == 0 else f"s{i - 1}", f"w{i}"], [f"s{i}"]) for i in range(tensors)]
    graph = helper.make_graph(nodes, "main", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
                              [helper.make_tensor_value_info(f"s{tensors - 1}", TensorProto.FLOAT, [64])], weights)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.external_data_helper.convert_model_to_external_data(model, location="weights.bin", size_threshold=0)
    onnx.save(model, tmp_path / "m.onnx")
    (tmp_path / "weights.bin").unlink()  # the data file is lost
    return tmp_path / "m.onnx"


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_a_missing_data_file_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    path = _external_model(tmp_path, 40)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, str(path))
    assert code == 1
    assert out.count("GL107") == 1, out
    assert "external data file 'weights.bin' does not exist beside the model" in out
    assert "40 tensors read from it: graph 'main' initializer 'w0'" in out
    assert len(out.splitlines()) <= 6
    if fmt != "github":  # the summary counts what it shows: one cause, one line
        assert "Found 1 error in 1 file." in out


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_keep_every_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    import json

    path = _external_model(tmp_path, 40)
    _, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, str(path))
    data = json.loads(out)
    found = data if fmt == "json" else data["runs"][0]["results"]
    assert sum(1 for d in found if (d.get("code") or d.get("ruleId")) == "GL107") == 40


def test_findings_alike_in_text_are_grouped_with_their_places(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "".join(f"  y{i} = Relu (missing{i})\n" for i in range(12))
    outs = ", ".join(f"y{i}" for i in range(12))
    p = tmp_path / "m.onnxtxt"
    p.write_text(H + f"g (float[N] x) => ({outs}) {{\n{body}}}\n")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(p))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (f"{p}:3:14: error: GL201 'missing0' is not defined: no node, graph input or initializer "
                        "produces it (and 11 more like it: 4:14, 5:14, 6:14, …)")  # fmt: skip
    assert lines[1] == "Found 12 errors in 1 file."
    _, out, _ = run(capsys, "check", "--no-cache", str(p))
    assert out.count("GL201") == 1 and "  = and 11 more like it: 4:14, 5:14, 6:14, …" in out
    # two alike are each shown
    p.write_text(H + "g (float[N] x) => (a, b) {\n  a = Relu (m1)\n  b = Relu (m2)\n}\n")
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(p))
    assert out.count("GL201") == 2 and "more like it" not in out


# ---- contradictions
def test_a_missing_path_is_not_all_checks_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(tmp_path / "missing.onnx"))
    assert code == 2 and "missing.onnx: no such file or directory" in err
    assert "All checks passed" not in out + err and out == ""
    (tmp_path / "ok.onnxtxt").write_text(CLEAN)
    code, out, err = run(capsys, "check", "--no-cache", str(tmp_path / "missing.onnx"), str(tmp_path / "ok.onnxtxt"))
    assert code == 2 and "All checks passed" not in out and "1 path not found" in out


@pytest.mark.parametrize("address", ["localhost:notaport", "notaport", "localhost:99999", "localhost:"])
def test_serve_with_a_bad_address_is_a_usage_error(capsys: pytest.CaptureFixture[str], address: str) -> None:
    code, _, err = run(capsys, "serve", "--tcp", address)
    assert code == 2 and "internal error" not in err and "expected HOST:PORT" in err


# ---- shapes --format json
def test_shapes_json_dims_are_plain_and_values_carry_their_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import onnx
    from onnx import TensorProto, helper

    def branch(name: str, value: int) -> onnx.GraphProto:
        c = helper.make_node("Constant", [], [f"{name}_c"], value=helper.make_tensor("v", TensorProto.INT64, [1], [value]))
        return helper.make_graph([c], name, [], [helper.make_tensor_value_info(f"{name}_c", TensorProto.INT64, [1])])

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["p2o.DynamicDimension.0", 3])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    nodes = [helper.make_node("If", ["c"], ["i"], name="If_0", then_branch=branch("t", 1), else_branch=branch("e", 2)),
             helper.make_node("Relu", ["x"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "main", [x, cond], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                                          helper.make_tensor_value_info("i", TensorProto.INT64, None)])  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    assert main(["shapes", "--format", "json", str(path)]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    by_name = {v["name"]: v for v in values}
    assert by_name["x"]["shape"] == ["p2o.DynamicDimension.0", 3] and by_name["y"]["shape"] == ["p2o.DynamicDimension.0", 3]
    assert by_name["x"]["graph"] == "main"
    constants = sorted((v["graph"], v["node"]) for v in values if v.get("node") == "Constant_0")
    assert constants == [("main/If_0.else_branch", "Constant_0"), ("main/If_0.then_branch", "Constant_0")]


# ---- --fix on a binary: atomic
def test_fix_replaces_a_binary_atomically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import onnx

    path = tmp_path / "m.onnx"
    onnx.save(broken_model(), path)  # an unused initializer: the safe fix removes it
    os.chmod(path, 0o640)
    before = path.read_bytes()
    replaced: list[tuple[str, str]] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        replaced.append((str(src), str(dst)))
        assert Path(dst).read_bytes() == before  # until the rename, the old model is whole
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    run(capsys, "check", "--no-cache", "--fix", str(path))
    assert len(replaced) == 1 and replaced[0][1] == str(path)
    assert Path(replaced[0][0]).parent == tmp_path  # the temporary file is beside the model (same file system)
    assert path.read_bytes() != before and "w" not in {i.name for i in onnx.load(path).graph.initializer}
    assert os.stat(path).st_mode & 0o777 == 0o640 and sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_an_interrupted_fix_leaves_the_model_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import onnx

    path = tmp_path / "m.onnx"
    onnx.save(broken_model(), path)
    before = path.read_bytes()

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    code, _, err = run(capsys, "check", "--no-cache", "--fix", str(path))
    assert code == 2 and f"graphlsp: error: {path}: cannot write the fixed model: No space left on device" in err
    assert "internal error" not in err
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_on_a_terminal_the_severity_word_is_coloured(tmp_path: Path) -> None:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.output import format_full
    from graphlsp.lint.runner import lint_text

    text = H + "g (float[N] x) => (float[N] y) {\n  spare = Neg (x)\n  y = Relu (zz)\n}\n"
    _, diags = lint_text(text, "m.onnxtxt", Settings())
    out = format_full(diags, {"m.onnxtxt": text}, colour=True)
    assert "\033[31merror\033[0m: \033[1mGL201\033[0m" in out and "\033[33mwarning\033[0m: \033[1mGL207\033[0m" in out
