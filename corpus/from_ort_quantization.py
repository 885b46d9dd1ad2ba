"""onnxruntime.quantization: quantize_dynamic (plain and ORT-fused bert) and quantize_static, QDQ and QOperator,
with a random calibration reader, over the optimum and TorchScript exports."""
from __future__ import annotations

import os

from . import SEED
from .from_optimum import t_optimum_bert
from .from_ort_optimizer import ort_optimize
from .from_torchscript import t_ts_bert, t_ts_cnn, t_ts_transformer
from .kit import Ctx, export_to, seed_all, versions
from .registry import target


class RandomReader:
    """A calibration data reader for onnxruntime.quantization: a few random batches."""

    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)

    def rewind(self):  # older/newer ORT call this on some paths
        pass


@target("ort-quantize", "bert/cnn/transformer", "onnxruntime.quantization",
        "quantize_dynamic (MatMulInteger, DynamicQuantizeLinear; QAttention on the fused bert); quantize_static "
        "QDQ and QOperator (QLinearConv, QLinearMatMul, ...) with a random calibration reader")
def t_ort_quant(ctx):
    import numpy as np
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_dynamic, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    seed_all()
    # dynamic: plain bert (optimum) and fused bert (ORT optimizer)
    bert = export_to(ctx, t_optimum_bert, "optimum_bert.onnx")
    quantize_dynamic(bert, ctx.path("ortq_dynamic_bert.onnx"), weight_type=QuantType.QInt8)
    ctx.file("ortq_dynamic_bert.onnx", "quantize_dynamic of optimum bert, QInt8 weights")
    sub = Ctx(os.path.join(ctx.tmp, "fused"))
    os.makedirs(sub.stage)
    ort_optimize(sub, export_to(ctx, t_ts_bert, "torchscript_bert.onnx"), "fused.onnx", "bert", 4, 32, "")
    quantize_dynamic(sub.path("fused.onnx"), ctx.path("ortq_dynamic_bert_fused.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, extra_options={"DefaultTensorType": 1})  # FLOAT where inference is silent
    ctx.file("ortq_dynamic_bert_fused.onnx", "quantize_dynamic of the ORT-fused bert, per-channel: QAttention, "
             "DynamicQuantizeMatMul")

    # static: the CNN (QDQ and QOperator), the transformer (QDQ, per-channel)
    cnn = export_to(ctx, t_ts_cnn, "torchscript_cnn.onnx")
    pre = os.path.join(ctx.tmp, "cnn_pre.onnx")
    quant_pre_process(cnn, pre)
    rng = np.random.default_rng(SEED)
    imgs = [{"pixel_values": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)} for _ in range(8)]
    for fmt, name, note in [(QuantFormat.QDQ, "ortq_static_qdq_cnn.onnx", "QuantizeLinear/DequantizeLinear pairs"),
                            (QuantFormat.QOperator, "ortq_static_qop_cnn.onnx", "QLinearConv and friends")]:
        quantize_static(pre, ctx.path(name), RandomReader(imgs), quant_format=fmt, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)
        ctx.file(name, "quantize_static of the TorchScript CNN: " + note)
    tr = export_to(ctx, t_ts_transformer, "torchscript_transformer.onnx")
    pre = os.path.join(ctx.tmp, "tr_pre.onnx")
    quant_pre_process(tr, pre)
    feeds = [{"input_ids": rng.integers(0, 128, (1, 8)).astype(np.int64), "attention_mask": np.ones((1, 8), np.int64)}
             for _ in range(8)]
    quantize_static(pre, ctx.path("ortq_static_qdq_transformer.onnx"), RandomReader(feeds),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, extra_options={"ActivationSymmetric": True})
    ctx.file("ortq_static_qdq_transformer.onnx", "quantize_static QDQ, per-channel weights, of the TorchScript "
             "transformer")
    ctx.exporter("onnxruntime.quantization (" + versions("onnxruntime", "torch", "transformers", "optimum-onnx") + ")")
