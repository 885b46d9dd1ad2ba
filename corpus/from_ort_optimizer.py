"""onnxruntime's optimizers: the transformers optimizer (`optimize_model`: Attention, SkipLayerNormalization ...
fusions) and the graph an InferenceSession saves after its own fusions, both over other families' exports."""
from __future__ import annotations

from .from_optimum import t_optimum_bart, t_optimum_bert, t_optimum_clip, t_optimum_gpt2, t_optimum_vit
from .from_torchscript import t_ts_bert, t_ts_cnn, t_ts_transformer
from .kit import export_to, versions
from .registry import target


def ort_optimize(ctx, src, name, model_type, num_heads, hidden_size, note, **kw):
    from onnxruntime.transformers.optimizer import optimize_model

    opt = optimize_model(src, model_type=model_type, num_heads=num_heads, hidden_size=hidden_size, opt_level=None,
                         use_gpu=False, **kw)
    opt.save_model_to_file(ctx.path(name), use_external_data_format=False)
    ctx.file(name, note, fused=opt.get_fused_operator_statistics())
    ctx.exporter("onnxruntime.transformers.optimizer.optimize_model (" + versions("onnxruntime") + ")")


@target("ort-optimizer", "bert/gpt2", "onnxruntime transformers optimizer",
        "optimize_model(model_type=bert / gpt2): com.microsoft Attention, EmbedLayerNormalization, "
        "SkipLayerNormalization, BiasGelu (bert); FastGelu, SkipLayerNormalization (optimum's gpt2 with past: its "
        "SDPA attention is not fused)")
def t_ort_opt(ctx):
    src = export_to(ctx, t_ts_bert, "torchscript_bert.onnx")
    ort_optimize(ctx, src, "ortopt_bert.onnx", "bert", 4, 32, "TorchScript BertModel, model_type=bert")
    src = export_to(ctx, t_optimum_bert, "optimum_bert.onnx")
    ort_optimize(ctx, src, "ortopt_optimum_bert.onnx", "bert", 4, 32, "optimum BertModel (sdpa), model_type=bert")
    src = export_to(ctx, t_optimum_gpt2, "optimum_gpt2.onnx")
    ort_optimize(ctx, src, "ortopt_gpt2.onnx", "gpt2", 4, 32, "optimum GPT-2 with past, model_type=gpt2")


@target("ort-optimizer-more", "vit/clip/bart", "onnxruntime transformers optimizer",
        "optimize_model(model_type=vit / clip / bart) of optimum's exports: Attention, SkipLayerNormalization, "
        "BiasGelu, QuickGelu where the optimizer fuses them")
def t_ort_opt_more(ctx):
    for fn, src_name, name, model_type in [
            (t_optimum_vit, "optimum_vit.onnx", "ortopt_vit.onnx", "vit"),
            (t_optimum_clip, "optimum_clip.onnx", "ortopt_clip.onnx", "clip"),
            (t_optimum_bart, "optimum_bart__encoder_model.onnx", "ortopt_bart_encoder.onnx", "bart"),
            (t_optimum_bart, "optimum_bart__decoder_model.onnx", "ortopt_bart_decoder.onnx", "bart")]:
        src = export_to(ctx, fn, src_name)
        ort_optimize(ctx, src, name, model_type, 4, 32, f"optimum {src_name[:-5]}, model_type={model_type}")


@target("ort-session-optimized", "cnn/bert", "onnxruntime SessionOptions.optimized_model_filepath",
        "graphs saved by an onnxruntime session after its own ORT_ENABLE_EXTENDED fusions (FusedConv, "
        "FusedGemm, FusedMatMul, BiasGelu; opset imports of every domain ORT registers)")
def t_ort_session(ctx):
    import onnxruntime as ort

    for fn, src_name, name, note in [
            (t_ts_cnn, "torchscript_cnn.onnx", "ortsess_cnn.onnx", "TorchScript CNN"),
            # opset 17: at opset 14 the saved graph has LayerNormalization (opset 17) and fails onnx.checker
            (lambda c: t_ts_bert(c, 17, "bert17.onnx"), "bert17.onnx", "ortsess_bert.onnx",
             "TorchScript BertModel (opset 17)"),
            (t_ts_transformer, "torchscript_transformer.onnx", "ortsess_transformer.onnx", "TorchScript transformer")]:
        src = export_to(ctx, fn, src_name)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = ctx.path(name)
        ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
        ctx.file(name, note + ", optimized by an onnxruntime CPU session (level EXTENDED) and saved")
    ctx.exporter("onnxruntime InferenceSession, optimized_model_filepath (" + versions("onnxruntime", "torch") + ")")
