"""torch.onnx TorchScript exports (`dynamo=False`): the small modules, a torch.jit.script module with a
data-dependent loop and branch, and transformers' BertModel traced at the opset the ORT fusions expect."""
from __future__ import annotations

from .kit import seed_all, versions
from .registry import target
from .tiny_hf import bert_config, hf_model
from .torch_models import seeded, torch_ids, torch_modules, ts_export


@target("torchscript-cnn", "cnn", "torch.onnx (TorchScript)", "Conv/BN/pool CNN, dynamic batch/height/width")
def t_ts_cnn(ctx):
    import torch

    cnn, _, _ = torch_modules()
    ts_export(seeded(cnn), (torch.randn(2, 3, 32, 32),), ctx.path("torchscript_cnn.onnx"), ["pixel_values"],
               ["probs"], {"pixel_values": {0: "batch_size", 2: "height", 3: "width"}, "probs": {0: "batch_size"}})
    ctx.file("torchscript_cnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch") + ")")


@target("torchscript-transformer", "transformer", "torch.onnx (TorchScript)",
        "hand-written causal transformer, dynamic batch/sequence, mask from shapes")
def t_ts_transformer(ctx):
    _, tr, _ = torch_modules()
    ids, mask = torch_ids(2, 8, 128)
    ts_export(seeded(tr), (ids, mask), ctx.path("torchscript_transformer.onnx"), ["input_ids", "attention_mask"],
               ["logits"], {"input_ids": {0: "batch_size", 1: "sequence_length"},
                            "attention_mask": {0: "batch_size", 1: "sequence_length"},
                            "logits": {0: "batch_size", 1: "sequence_length"}})
    ctx.file("torchscript_transformer.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch") + ")")


@target("torchscript-rnn", "rnn", "torch.onnx (TorchScript)", "bidirectional 2-layer LSTM + GRU")
def t_ts_rnn(ctx):
    _, _, rnn = torch_modules()
    ids, _ = torch_ids(2, 7, 64)
    ts_export(seeded(rnn), (ids,), ctx.path("torchscript_rnn.onnx"), ["input_ids"], ["logits", "h_n"],
               {"input_ids": {0: "batch_size", 1: "sequence_length"},
                "logits": {0: "batch_size", 1: "sequence_length"}, "h_n": {1: "batch_size"}})
    ctx.file("torchscript_rnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch") + ")")


@target("torchscript-scripted-loop", "control-flow", "torch.onnx (TorchScript)",
        "torch.jit.script module: data-dependent loop and branch -> Loop, If")
def t_ts_loop(ctx):
    import torch
    from torch import nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.Linear(16, 8)

        def forward(self, x):
            h = torch.zeros(x.shape[0], 8)
            for i in range(x.shape[1]):
                h = torch.tanh(self.cell(torch.cat([x[:, i], h], dim=1)))
                if bool(h.sum() > 0):  # noqa: SIM108 (an If in the export, as written)
                    h = h * 0.5
                else:
                    h = h + 1.0
            return h

    seed_all()
    m = torch.jit.script(Recurrent().eval())
    ts_export(m, (torch.randn(2, 5, 8),), ctx.path("torchscript_scripted_loop.onnx"), ["x"], ["h"],
               {"x": {0: "batch_size", 1: "steps"}, "h": {0: "batch_size"}})
    ctx.file("torchscript_scripted_loop.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) of a torch.jit.script module (" + versions("torch") + ")")


@target("torchscript-bert", "bert", "torch.onnx (TorchScript)",
        "transformers BertModel (eager attention) traced, opset 14: the input the ORT fusions were written for")
def t_ts_bert(ctx, opset=14, name="torchscript_bert.onnx"):
    cfg = bert_config()
    cfg._attn_implementation = "eager"
    model = hf_model("BertModel", cfg)
    model.config.return_dict = False
    ids, mask = torch_ids(2, 8, 256)
    axes = {"batch_size": 0, "sequence_length": 1}
    dyn = {n: {v: k for k, v in axes.items()} for n in ("input_ids", "attention_mask", "token_type_ids")}
    dyn["last_hidden_state"] = {0: "batch_size", 1: "sequence_length"}
    dyn["pooler_output"] = {0: "batch_size"}
    ts_export(model, (ids, mask, mask * 0), ctx.path(name),
               ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"], dyn,
               opset=opset)
    ctx.file(name)
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch", "transformers") + ")")
