"""torch.onnx dynamo exports (torch.export): the small modules, torch.cond, transformers' Llama. The exporter records
each node's Python stack (file, line) in metadata_props, so these files change when this module is edited."""
from __future__ import annotations

from .kit import versions
from .registry import target
from .tiny_hf import decoder_kw, hf_model
from .torch_models import seeded, torch_ids, torch_modules


def _dynamo_export(model, args, path, input_names, output_names, dynamic_shapes, kwargs=None, opset=None):
    import torch

    kw = dict(dynamo=True, input_names=input_names, output_names=output_names, dynamic_shapes=dynamic_shapes,
              external_data=False, optimize=True)
    if opset:
        kw["opset_version"] = opset
    if kwargs:
        kw["kwargs"] = kwargs
    prog = torch.onnx.export(model, args, **kw)
    prog.save(path, external_data=False)


@target("dynamo-cnn", "cnn", "torch.onnx (dynamo)", "same CNN via torch.export, dynamic batch/height/width")
def t_dyn_cnn(ctx):
    import torch
    from torch.export import Dim

    cnn, _, _ = torch_modules()
    b, h, w = Dim("batch_size", min=1, max=64), Dim("height", min=8, max=512), Dim("width", min=8, max=512)
    _dynamo_export(seeded(cnn), (torch.randn(2, 3, 32, 32),), ctx.path("dynamo_cnn.onnx"), ["pixel_values"],
                   ["probs"], {"x": {0: b, 2: h, 3: w}})
    ctx.file("dynamo_cnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-transformer", "transformer", "torch.onnx (dynamo)",
        "hand-written causal transformer via torch.export, dynamic batch/sequence")
def t_dyn_transformer(ctx):
    from torch.export import Dim

    _, tr, _ = torch_modules()
    ids, mask = torch_ids(2, 8, 128)
    b, s = Dim("batch_size", min=1, max=64), Dim("sequence_length", min=2, max=64)
    _dynamo_export(seeded(tr), (ids, mask), ctx.path("dynamo_transformer.onnx"), ["input_ids", "attention_mask"],
                   ["logits"], {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: s}})
    ctx.file("dynamo_transformer.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-rnn", "rnn", "torch.onnx (dynamo)",
        "LSTM + GRU via torch.export, dynamic batch; sequence length static (with a sequence Dim, torch.export "
        "keeps `sequence_length` on the input but hard-codes the example's length inside)")
def t_dyn_rnn(ctx):
    from torch.export import Dim

    _, _, rnn = torch_modules()
    ids, _ = torch_ids(2, 7, 64)
    _dynamo_export(seeded(rnn), (ids,), ctx.path("dynamo_rnn.onnx"), ["input_ids"], ["logits", "h_n"],
                   {"input_ids": {0: Dim("batch_size", min=1, max=64)}})
    ctx.file("dynamo_rnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-cond", "control-flow", "torch.onnx (dynamo)", "torch.cond on a data-dependent predicate -> If")
def t_dyn_cond(ctx):
    import torch
    from torch import nn
    from torch.export import Dim

    class CondNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 16)

        def forward(self, x):
            def yes(x):
                return torch.relu(self.a(x))

            def no(x):
                return torch.sigmoid(self.b(x)) - 0.5

            return torch.cond(x.sum() > 0, yes, no, (x,))

    _dynamo_export(seeded(CondNet), (torch.randn(3, 16),), ctx.path("dynamo_cond.onnx"), ["x"], ["y"],
                   {"x": {0: Dim("batch_size", min=1, max=64)}})
    ctx.file("dynamo_cond.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-llama", "llama", "torch.onnx (dynamo)",
        "transformers LlamaForCausalLM (no cache) via torch.export, dynamic batch/sequence")
def t_dyn_llama(ctx):
    import torch
    from torch.export import Dim
    from transformers import LlamaConfig

    cfg = LlamaConfig(**decoder_kw(), use_cache=False)
    model = hf_model("LlamaForCausalLM", cfg)

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    ids, mask = torch_ids(2, 8, 256)
    b, s = Dim("batch_size", min=1, max=64), Dim("sequence_length", min=2, max=64)
    _dynamo_export(Wrap(model).eval(), (ids, mask), ctx.path("dynamo_llama.onnx"), ["input_ids", "attention_mask"],
                   ["logits"], {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: s}})
    ctx.file("dynamo_llama.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "transformers", "onnxscript") + ")")
