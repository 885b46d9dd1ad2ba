"""GL7xx deployment rules: kernels per target (no-kernel, ep-fallback), runtime-too-old, against onnxruntime."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import onnx
import onnx.parser
import pytest

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import model_from_proto, read_model
from graphlsp.lint.config import ConfigError, Settings, from_editor, load_settings
from graphlsp.lint.deployment import deployment_findings
from graphlsp.lint.runner import lint_text
from graphlsp.runtime import kernels
from graphlsp.runtime.installed import read_installed
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import kernel_agreement  # noqa: E402

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
REALWORLD = ROOT.parent / "shared" / "realworld"


def codes(text: str, targets: list[str] | None = None) -> list[tuple[str, str, str]]:
    settings = Settings(targets=targets or ["onnxruntime:cpu"])
    return [(d.code, d.severity, d.message) for d in lint_text(text, "m.onnxtxt", settings)[1]
            if d.code.startswith("GL7")]


def unary(op: str, elem: str) -> str:
    return H + f"g ({elem}[N] x) => ({elem}[N] y) {{\n  y = {op} (x)\n}}\n"


def loads(text: str) -> str:
    return kernel_agreement.ort_result(onnx.parser.parse_model(text))


def test_the_shipped_cpu_table_is_the_installed_onnxruntime_registry() -> None:
    installed = read_installed()
    assert installed is not None
    shipped = kernels.shipped_common()
    cpu = (kernels.TABLES / "onnxruntime-cpu.json").read_text()
    import json

    assert shipped["version"] == installed["version"], "regenerate: tools/ort_kernel_tables.py"
    assert json.loads(cpu)["kernels"] == json.loads(json.dumps(installed["providers"]["cpu"]))
    assert shipped["limits"] == installed["limits"]


def test_the_issue_examples_agree_with_onnxruntime() -> None:
    bf16 = unary("Abs", "bfloat16")
    label = kernels.table_for("onnxruntime:cpu").label  # onnxruntime 1.32 CPU
    assert codes(bf16) == [("GL701", "error", f"{label} has Abs(13) for float, double, int8...int64, "
                                              "uint8...uint64; not bfloat16")]
    assert loads(bf16) == "not-implemented"
    max16 = H + "g (int16[N] x) => (int16[N] y) {\n  y = Max (x, x)\n}\n"
    assert [c[:2] for c in codes(max16)] == [("GL701", "error")] and loads(max16) == "not-implemented"
    add16 = H + "g (float16[N] x) => (float16[N] y) {\n  y = Add (x, x)\n}\n"
    got = codes(add16)
    assert [c[:2] for c in got] == [("GL701", "warning")] and "float32" in got[0][2]
    assert loads(add16) == "ok"
    assert codes(unary("Abs", "float")) == [] and loads(unary("Abs", "float")) == "ok"


def test_a_function_is_checked_at_each_call_with_that_calls_types() -> None:
    text = ('<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n'
            "g (float[N] a, bfloat16[N] b) => (float[N] y, bfloat16[N] z) {\n"
            "  y = local.Magnitude (a)\n  z = local.Magnitude (b)\n}\n"
            '<domain: "local", opset_import: ["" : 21]>\nMagnitude (x) => (r) {\n  r = Abs (x)\n}\n')
    got = lint_text(text, "m.onnxtxt", Settings())[1]
    found = [d for d in got if d.code == "GL701"]
    assert len(found) == 1 and found[0].line == 4 and "in Magnitude, Abs" in found[0].message
    assert "not bfloat16" in found[0].message and found[0].related
    assert loads(text) == "not-implemented"


def test_nodes_in_if_branches_are_checked() -> None:
    text = (H + "g (bool c, bfloat16[N] x) => (bfloat16[N] y) {\n"
            "  y = If (c) <then_branch = t () => (bfloat16[N] o) {\n    o = Abs (x)\n  },"
            " else_branch = e () => (bfloat16[N] o) {\n    o = Identity (x)\n  }>\n}\n")
    assert [c[:2] for c in codes(text)] == [("GL701", "error")]
    assert loads(text) == "not-implemented"


def test_an_op_without_a_kernel_is_inlined_and_its_body_checked() -> None:
    # Softsign(22) has a kernel for float only, and its body (opset 18) is not valid at 22: not inlined
    assert [c[:2] for c in codes(unary("Softsign", "double"))] == [("GL701", "error")]
    # CenterCropPad has no kernel at all: inlined at the model's opset; at 18 its Pad(18) has no bfloat16 kernel,
    # at 21 Pad(21) has one
    at21 = H + "g (bfloat16[4, 5] x, int64[2] s) => (bfloat16[?, ?] y) {\n  y = CenterCropPad (x, s)\n}\n"
    at18 = at21.replace('"" : 21', '"" : 18')
    got = codes(at18)
    assert [c[:2] for c in got] == [("GL701", "error")] and "Pad" in got[0][2] and loads(at18) == "not-implemented"
    assert codes(at21) == [] and loads(at21) == "ok"
    assert codes(at18.replace("bfloat16", "float")) == [] and loads(at18.replace("bfloat16", "float")) == "ok"


def test_complex_is_not_a_tensor_type_onnxruntime_supports() -> None:
    got = codes(unary("Identity", "complex64"))
    assert [c[:2] for c in got] == [("GL701", "error")] and "complex64" in got[0][2]
    assert loads(unary("Identity", "complex64")) != "ok"


def test_contrib_ops_and_ops_without_an_onnx_schema() -> None:
    text = ('<ir_version: 10, opset_import: ["" : 21, "com.microsoft" : 1]>\n'
            "g (float[N, 8] x, float[8] g) => (float[N, 8] y) {\n  y = com.microsoft.FastGelu (x)\n}\n")
    assert codes(text) == [] and loads(text) == "ok"
    bad = text.replace("float", "bfloat16")
    assert [c[:2] for c in codes(bad)] == [("GL701", "error")] and loads(bad) == "not-implemented"
    sln = (H + "g (float[N, 8] x, float[8] scale) => (float[N, 8] y) {\n"
           "  y = SimplifiedLayerNormalization <epsilon = 1e-6> (x, scale)\n}\n")
    assert codes(sln) == [] and loads(sln) == "ok"
    assert [c[:2] for c in codes(sln.replace("float", "int32"))] == [("GL701", "error")]


def test_runtime_too_old() -> None:
    assert [c[:2] for c in codes(unary("Relu", "float").replace("ir_version: 10", "ir_version: 15"))] == [
        ("GL703", "error")]
    newer = unary("Relu", "float").replace('"" : 21', '"" : 29')
    got = codes(newer)
    assert ("GL703", "error") in [c[:2] for c in got] and loads(newer) == "other"
    assert codes(unary("Relu", "float").replace('"" : 21', '"" : 28')) == []


def test_ep_fallback_on_a_gpu_target() -> None:
    text = H + "g (int8[N] x) => (int8[N] y) {\n  y = Max (x, x)\n}\n"
    assert [c[:2] for c in codes(text, ["onnxruntime:cuda"])] == [("GL702", "warning")]
    assert codes(text) == []
    both = H + "g (int16[N] x) => (int16[N] y) {\n  y = Max (x, x)\n}\n"
    assert [c[:2] for c in codes(both, ["onnxruntime:cuda"])] == [("GL701", "error")]  # no CPU kernel either


def test_targets_setting_and_its_errors(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\ntargets = ["onnxruntime:cpu", "onnxruntime:dml"]\n')
    assert load_settings(tmp_path).targets == ["onnxruntime:cpu", "onnxruntime:dml"]
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\ntargets = ["tensorrt"]\n')
    with pytest.raises(ConfigError, match="unknown target"):
        load_settings(tmp_path)
    assert Settings().targets == ["onnxruntime:cpu"]


def test_nothing_is_read_when_the_rules_are_off() -> None:
    kernels.table_for.cache_clear()
    lint_text(unary("Abs", "bfloat16"), "m.onnxtxt", Settings(ignore=["GL7"]))
    assert kernels.table_for.cache_info().currsize == 0


def test_shipped_tables_without_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHLSP_ORT_TABLES", "shipped")
    kernels.installed_table.cache_clear()
    kernels.table_for.cache_clear()
    try:
        table = kernels.table_for("onnxruntime:cpu")
        assert "wheel's registry" in table.source
        assert [c[:2] for c in codes(unary("Abs", "bfloat16"))] == [("GL701", "error")]
    finally:
        kernels.installed_table.cache_clear()
        kernels.table_for.cache_clear()


def test_a_sample_of_the_generated_models_agrees_with_onnxruntime() -> None:
    """tools/kernel_agreement.py on 200 models (the full run: about 10,000; see docs/deployment.md)."""
    cases = list(kernel_agreement.generate())
    assert len(cases) >= 3000
    sample = random.Random(22).sample(cases, 200)
    tally, notes = kernel_agreement.run(sample)
    assert tally.loaded > 50 and tally.not_implemented > 20, tally
    assert tally.false_flags == 0, notes
    assert tally.agreement >= 0.995, notes


@pytest.mark.parametrize("path", sorted([*(ROOT / "corpus" / "models").glob("*.onnx"), *REALWORLD.glob("*.onnx")]),
                         ids=lambda p: p.name)
def test_no_error_on_models_onnxruntime_loads(path: Path) -> None:
    model, findings = read_model(path)
    analysis = ModelAnalysis(model, findings)
    got = [f for f in deployment_findings(model, analysis.refiner, ["onnxruntime:cpu"]) if f.severity == "error"]
    assert got == [], [f.message for f in got]


def test_model_from_proto_round_trip_for_the_generator() -> None:
    case = next(kernel_agreement.generate())
    model, findings = model_from_proto(case.model)
    assert model.graph is not None and len(model.graph.nodes) == 1


def test_cli_target_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphlsp.cli import main

    model = tmp_path / "m.onnxtxt"
    model.write_text(H + "g (int8[N] x) => (int8[N] y) {\n  y = Max (x, x)\n}\n")
    assert main(["check", "--no-cache", str(model)]) == 0
    assert "GL702" not in capsys.readouterr().out
    assert main(["check", "--no-cache", "--strict", "--target", "onnxruntime:cuda", str(model)]) == 1
    out = capsys.readouterr().out
    assert "GL702" in out and "CUDA has Max(13)" in out and "not int8" in out
    assert main(["check", "--no-cache", "--target", "onnxruntime:tpu", str(model)]) == 2
    assert "unknown target" in capsys.readouterr().err


def test_the_editors_incremental_check_follows_edits() -> None:
    from graphlsp.analysis import Analysis
    from graphlsp.lint.diagnostics import collect_deployment

    text = H + "g (float[N] x) => (float[N] y) {\n  c = Cast <to = 1> (x)\n  y = Abs (c)\n}\n"
    a = Analysis(text)
    settings = Settings()

    def both() -> tuple[list[str], list[str]]:
        fast = [f"{d.line}:{d.code}" for d in collect_deployment(a, "m", settings, incremental=True)]
        full = [f"{d.line}:{d.code}" for d in collect_deployment(a, "m", settings)]
        return fast, full

    assert both() == ([], [])
    at = text.index("to = 1") + len("to = ")
    a.apply_edit(at, at + 1, "16")  # bfloat16: Abs has no kernel for it
    assert both() == (["4:GL701"], ["4:GL701"])
    a.apply_edit(at, at + 2, "6")  # int32
    assert both() == ([], [])


def test_nodes_onnxruntime_removes_before_it_looks_kernels_up() -> None:
    body = "g (bfloat16[N] x) => (bfloat16[N] y) {\n  a = Identity (x)\n  d = Dropout (a)\n  y = Identity (d)\n}\n"
    assert codes(H + body) == [] and loads(H + body) == "ok"  # EliminateDropout
    last = H + "g (bfloat16[N] x) => (bfloat16[N] y) {\n  a = Identity (x)\n  y = Dropout (a)\n}\n"
    assert [c[:2] for c in codes(last)] == [("GL701", "error")] and loads(last) == "not-implemented"
    noop = (H + "g (float16[N] x) => (float16[N] y) <float16 zero = {0}> {\n  a = Identity (x)\n"
            "  b = Add (a, zero)\n  y = Identity (b)\n}\n")
    assert codes(noop) == [] and loads(noop) == "ok"  # NoopElimination: no Cast rescue to warn of


def test_the_cast_quick_fix_makes_a_model_onnxruntime_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphlsp.cli import main

    text = (H + 'g (bfloat16[N] x, int16[N] "a b") => (bfloat16[N] y, int16[N] z) {\n  y = Abs (x)\n'
            '  z = Max ("a b", "a b")\n}\n')
    assert loads(text) == "not-implemented"
    path = tmp_path / "m.onnxtxt"
    path.write_text(text)
    assert main(["check", "--no-cache", "--fix", str(path)]) == 1  # unsafe: not applied by --fix alone
    assert path.read_text() == text
    assert main(["check", "--no-cache", "--fix", "--unsafe-fixes", str(path)]) == 0
    fixed = path.read_text()
    assert "  x_float = Cast <to = 1> (x)\n  y_float = Abs (x_float)\n" in fixed
    assert '  z_int32 = Max ("a b_int32", "a b_int32")\n  z = Cast <to = 5> (z_int32)\n' in fixed
    assert loads(fixed) == "ok"
    capsys.readouterr()


def test_nodes_in_loop_bodies_are_checked_with_the_types_the_loop_gives_them() -> None:
    text = (H + "g (int64 n, bool c, bfloat16[N] x) => (bfloat16[N] y) {\n"
            "  y = Loop (n, c, x) <body = b (int64 i, bool ci, bfloat16[N] v) => (bool co, bfloat16[N] w) {\n"
            "    co = Identity (ci)\n    w = Abs (v)\n  }>\n}\n")
    got = lint_text(text, "m.onnxtxt", Settings())[1]
    assert [(d.line, d.code) for d in got if d.code.startswith("GL7")] == [(5, "GL701")]
    assert loads(text) == "not-implemented"
    fine = text.replace("bfloat16", "float")
    assert codes(fine) == [] and loads(fine) == "ok"


def test_a_verdict_that_depends_on_the_nodes_neighbours_is_not_reused() -> None:
    # the same Dropout (op, version, types) twice: removed mid-graph, needed where it makes a graph output
    text = (H + "g (bfloat16[N] x) => (bfloat16[N] y, bfloat16[N] z) {\n  a = Dropout (x)\n  y = Identity (a)\n"
            "  z = Dropout (x)\n}\n")
    got = lint_text(text, "m.onnxtxt", Settings())[1]
    assert [(d.line, d.code) for d in got if d.code.startswith("GL7")] == [(5, "GL701")]
    assert loads(text) == "not-implemented"
    swapped = text.replace("  a = Dropout (x)\n  y = Identity (a)\n  z = Dropout (x)\n",
                           "  z = Dropout (x)\n  a = Dropout (x)\n  y = Identity (a)\n")
    got = lint_text(swapped, "m.onnxtxt", Settings())[1]
    assert [(d.line, d.code) for d in got if d.code.startswith("GL7")] == [(3, "GL701")]


def test_float16_nodes_run_in_float32_on_cpu_are_one_warning() -> None:
    text = (H + "g (float16[N] x) => (float16[N] y) {\n  a = Abs (x)\n  b = Sqrt (a)\n  c = Sqrt (b)\n"
            "  y = Abs (c)\n}\n")
    got = [d for d in lint_text(text, "m.onnxtxt", Settings())[1] if d.code.startswith("GL7")]
    assert [(d.line, d.code, d.severity) for d in got] == [(3, "GL701", "warning")]
    assert "no float16 kernel for 4 nodes (2 Abs, 2 Sqrt)" in got[0].message and len(got[0].related) == 3
    assert loads(text) == "ok"


def test_a_target_release_is_checked_against_that_releases_limits() -> None:
    text = unary("Relu", "float")  # IR version 10, opset 21
    assert codes(text) == []
    assert codes(text, ["onnxruntime@1.16:cpu"]) == [
        ("GL703", "error", "onnxruntime 1.16 loads IR version up to 9 and ai.onnx opset up to 19; this model has "
                           "IR version 10 and ai.onnx opset 21")]  # fmt: skip
    both = codes(text, ["onnxruntime@1.16.3:cpu", "onnxruntime@1.16:cuda"])  # one finding per release
    assert [c[:2] for c in both] == [("GL703", "error")]
    assert codes(text, ["onnxruntime@1.18:cpu"]) == []  # IR 10, opset 21: 1.18 loads both
    # a release without a kernel table of its own: only its limits are checked, no kernel is looked up elsewhere
    bf16 = unary("Abs", "bfloat16")
    assert codes(bf16, ["onnxruntime@1.18:cpu"]) == []
    assert [c[:2] for c in codes(bf16, ["onnxruntime@1.32:cpu"])] == [("GL701", "error")]  # the shipped table's


def test_the_release_hover_says_what_is_checked() -> None:
    from graphlsp.lint.deployment import hover_lines

    a = ModelAnalysis(*model_from_proto(onnx.parser.parse_model(unary("Abs", "bfloat16"))))
    assert a.model.graph is not None
    node = a.model.graph.nodes[0]
    lines = hover_lines(a.model, a.refiner, node, ["onnxruntime@1.18:cpu", "onnxruntime:cpu"])
    assert "- onnxruntime 1.18 CPU: no kernel table of this release (only its IR version and opsets are checked)" \
        in lines  # fmt: skip
    assert any(line.startswith("- onnxruntime 1.32 CPU: **no-kernel**") for line in lines)


def test_the_releases_table() -> None:
    table = kernels.releases()
    names = list(table)
    assert names[0] == "0.1" and len(table) >= 38
    minors = [int(n.split(".")[1]) for n in names if n.startswith("1.")]
    assert minors == list(range(minors[-1] + 1))  # every release from 1.0 on
    for older, newer in zip(names, names[1:], strict=False):  # no release loads less than the one before it
        a, b = table[older], table[newer]
        assert b["ir_version"] >= a["ir_version"], (older, newer)
        assert all(b["opsets"][d] >= v for d, v in a["opsets"].items()), (older, newer)
    assert table["1.16"]["ir_version"] == 9 and table["1.16"]["opsets"]["ai.onnx"] == 19
    assert table["1.0"]["opsets"] == {"ai.onnx": 11, "ai.onnx.ml": 2}
    # the installed onnxruntime is the oracle for its own release
    installed = read_installed()
    assert installed is not None
    row = table[kernels.short_version(installed["version"])]
    assert row["ir_version"] == installed["limits"]["ir_version"]
    assert all(installed["limits"]["opsets"][d] == v for d, v in row["opsets"].items())


def test_release_targets_in_settings_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphlsp.cli import main

    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\ntargets = ["onnxruntime@1.16.3:cpu"]\n')
    assert load_settings(tmp_path).targets == ["onnxruntime@1.16:cpu"]
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\ntargets = ["onnxruntime@1.99:cpu"]\n')
    with pytest.raises(ConfigError, match="unknown onnxruntime release '1.99'"):
        load_settings(tmp_path)
    assert from_editor(Settings(), {"targets": ["onnxruntime@1.16:cuda"]}).targets == ["onnxruntime@1.16:cuda"]
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\ntargets = ["onnxruntime:cpu"]\n')
    model = tmp_path / "m.onnxtxt"
    model.write_text(unary("Relu", "float"))
    assert main(["check", "--no-cache", str(model)]) == 0
    assert main(["check", "--no-cache", "--target", "onnxruntime@1.16:cpu", str(model)]) == 1
    assert "GL703 onnxruntime 1.16 loads IR version up to 9" in capsys.readouterr().out


def test_the_cuda_and_dml_tables() -> None:
    cuda = kernels.table_for("onnxruntime:cuda")
    dml = kernels.table_for("onnxruntime:dml")
    for table in (cuda, dml):
        assert table.version == "1.32" and "dd012d12d84f62fb5fcf22f712ddc45dc029782f" in table.source
    assert cuda.label == "onnxruntime 1.32 CUDA"
    assert sum(len(e) for ops in cuda.kernels.values() for e in ops.values()) >= 500
    assert cuda.lookup("", "Abs", 13, ["bfloat16"], ["bfloat16"]).status == "ok"
    assert cuda.lookup("", "Max", 13, ["int8", "int8"], ["int8"]).status == "missing"
    assert cuda.lookup("", "Mod", 28, ["int32", "int32"], ["int32"]).status == "ok"  # opset 28: a 1.32 kernel
    assert cuda.has_op("", "TensorScatter") and cuda.has_op("com.microsoft", "GatedDeltaNet")
    assert dml.lookup("", "Abs", 13, ["float16"], ["float16"]).status == "ok"
    assert [e[:2] for e in dml.kernels[""]["BitShift"]] == [[11, 27]]
    assert dml.has_op("com.microsoft", "QLinearSigmoid") and dml.has_op("com.microsoft.dml", "DmlFusedConv")


def test_the_kernels_doc_parser() -> None:
    import ort_kernel_tables

    doc = ("## Operators implemented by CUDAExecutionProvider\n|**Operator Domain:** *ai.onnx.ml*||||\n"
           "|CastMap|*in* X:**T1**<br> *out* Y:**T2**|1+|**T1** = map(int64, tensor(float)), map(int64, "
           "tensor(string))<br/> **T2** = tensor(float), tensor(int64)|\n|Abs|*in* X:**T**|[6, 12]|**T** = "
           "tensor(float)|\n")  # fmt: skip
    got = ort_kernel_tables.parse_kernels_doc(doc)["cuda"]["ai.onnx.ml"]
    assert got["CastMap"] == [[1, None, {"T1": ["map(int64,tensor(float))", "map(int64,tensor(string))"],
                                         "T2": ["float", "int64"]}]]  # fmt: skip
    assert got["Abs"] == [[6, 12, {"T": ["float"]}]]
