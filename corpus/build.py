#!/usr/bin/env python3
"""Build corpus/models/: real exporter-produced binary ONNX models, tiny configs, random weights.

    python3 corpus/build.py                 # create the venvs if needed, build every target
    python3 corpus/build.py --list          # what it builds (no venv needed)
    python3 corpus/build.py --only optimum-bert,skl-tree-ensembles
    python3 corpus/build.py --table         # rewrite README.md's table from models/MANIFEST.json

Runs with any python3 (stdlib only here). It creates its own virtual environments and runs every
target in a subprocess of the right one:
    main    $GL_CORPUS_VENV (default $TMPDIR/gl-corpus/venv)   requirements.txt
    tf      $GL_CORPUS_VENV-tf                                 requirements-tf.txt      (optional)
    paddle  $GL_CORPUS_VENV-paddle                             requirements-paddle.txt  (optional)
A venv is (re)installed when its requirements file changed (a stamp file in the venv). Extra pip
arguments come from $GL_CORPUS_PIP_ARGS (e.g. an extra index for CPU torch wheels). A group whose
install fails, and a target whose export or validation fails, is skipped with its reason printed;
the build goes on.

Every model written is validated in the main venv: onnx.checker.check_model (full_check, i.e. strict
shape inference too, for files under 64 MB), an onnxruntime CPU InferenceSession loads it, and it runs
under at least one assignment of its symbolic input dims (the same kind of feeds the shared oracle
tools/runtime_shapes.py makes). Files that fail are not kept. What was kept is listed in
models/MANIFEST.json (exporter versions, features, size, sha256) and README.md's table.

Weights are random from fixed seeds (torch.manual_seed, numpy, random, tf, paddle); exports are
deterministic as far as the exporters allow.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
MANIFEST = os.path.join(MODELS, "MANIFEST.json")
README = os.path.join(HERE, "README.md")
SEED = 0
REQUIREMENTS = {"main": "requirements.txt", "tf": "requirements-tf.txt", "paddle": "requirements-paddle.txt"}
INSTALL_TIMEOUT = {"main": 2400, "tf": 1800, "paddle": 1800}
TARGET_TIMEOUT = 900
FULL_CHECK_LIMIT = 64 << 20


# ================================================================ targets
class Target:
    def __init__(self, name, group, family, exporter, note, fn):
        self.name, self.group, self.family, self.exporter, self.note, self.fn = name, group, family, exporter, note, fn


TARGETS: list[Target] = []


def target(name, family, exporter, note, group="main"):
    def deco(fn):
        TARGETS.append(Target(name, group, family, exporter, note, fn))
        return fn

    return deco


def by_name() -> dict[str, Target]:
    return {t.name: t for t in TARGETS}


# ---------------------------------------------------------------- helpers used inside the venvs
def seed_all():
    import random

    import numpy as np

    random.seed(SEED)
    np.random.seed(SEED)
    try:
        import torch

        torch.manual_seed(SEED)
    except ImportError:
        pass


def versions(*pkgs) -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for p in pkgs:
        try:
            out.append(f"{p} {version(p)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def torchvision_shim():
    """PyPI's torchvision wheels are built against CUDA torch; with the CPU torch its C++ ops (_C.so) do
    not load and `import torchvision` fails (and so does transformers, which imports it when present).
    Define torchvision::nms/qnms ourselves (a plain CPU kernel) so that torchvision imports, its ONNX
    symbolic for nms (NonMaxSuppression) is used when tracing, and the exported graph is what it would be
    with the real kernel. roi_align etc. fall back to torchvision's Python implementations."""
    import torch

    try:
        torch.ops.torchvision.nms  # noqa: B018
        return None  # real ops present
    except (AttributeError, RuntimeError):
        pass
    try:
        from importlib.util import find_spec

        if find_spec("torchvision") is None:
            return None
        lib = torch.library.Library("torchvision", "DEF")
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

        def nms(dets, scores, thr):
            order = torch.argsort(scores, descending=True)
            x1, y1, x2, y2 = dets.unbind(1)
            area = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
            sup = torch.zeros(len(order), dtype=torch.bool)
            keep = []
            for ii in range(len(order)):
                if sup[ii]:
                    continue
                i = order[ii]
                keep.append(int(i))
                rest = order[ii + 1:]
                w = (torch.minimum(x2[i], x2[rest]) - torch.maximum(x1[i], x1[rest])).clamp(min=0)
                h = (torch.minimum(y2[i], y2[rest]) - torch.maximum(y1[i], y1[rest])).clamp(min=0)
                inter = w * h
                sup[ii + 1:] |= inter / (area[i] + area[rest] - inter) > thr
            return torch.tensor(keep, dtype=torch.int64)

        lib.impl("nms", nms, "CPU")
        lib.impl("qnms", nms, "CPU")
        import torchvision.ops.boxes as boxes

        boxes._assert_has_ops = _ops_present  # scripted by batched_nms when tracing: a plain function
        return lib
    except Exception as e:  # noqa: BLE001
        print(f"torchvision shim failed: {e}", file=sys.stderr)
        return None


def _ops_present() -> None:
    pass


class Ctx:
    """What a target function gets: where to write, and where to say how."""

    def __init__(self, stage: str):
        self.stage = stage
        self.info: dict = {"files": {}}
        self.tmp = tempfile.mkdtemp(prefix="gl-corpus-")

    def path(self, name: str) -> str:
        return os.path.join(self.stage, name)

    def file(self, name: str, note: str = "", **extra):
        self.info["files"][name] = {"note": note, **extra}

    def exporter(self, text: str):
        self.info["exporter"] = text


def inline_external_data(src: str, dst: str):
    """Copy an ONNX file; if it has external data, load it and save it as one file (corpus files are small)."""
    import onnx

    m = onnx.load(src, load_external_data=True)
    onnx.save(m, dst, save_as_external_data=False)


# ---------------------------------------------------------------- optimum (Hugging Face) exports
def hf_model(cls_name: str, config):
    import torch
    import transformers

    seed_all()
    model = getattr(transformers, cls_name)(config)
    model.eval()
    with torch.no_grad():  # deterministic, small non-trivial values for every parameter
        g = torch.Generator().manual_seed(SEED)
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    return model


def pin_input_dims(path: str, pin: dict[str, dict[int, int]]) -> str:
    """Replace the dim_params of graph inputs that the model can only run with one value (the exporter
    declares them symbolic, but e.g. position embeddings fix them). Returns a note, '' if nothing changed."""
    import onnx

    m = onnx.load(path)
    done = []
    for vi in m.graph.input:
        for axis, value in pin.get(vi.name, {}).items():
            d = vi.type.tensor_type.shape.dim[axis]
            if d.HasField("dim_param"):
                done.append(f"{vi.name}[{axis}] `{d.dim_param}`={value}")
                d.Clear()
                d.dim_value = value
    if done:
        onnx.save(m, path)
    return ("input dims pinned (the model runs only with these): " + ", ".join(done)) if done else ""


def optimum_export(ctx: Ctx, prefix: str, model, task: str, notes: dict[str, str] | None = None,
                   pin: dict[str, dict[int, int]] | None = None, **kw):
    from optimum.exporters.onnx import main_export

    src = os.path.join(ctx.tmp, prefix + "-src")
    out = os.path.join(ctx.tmp, prefix + "-onnx")
    model.save_pretrained(src)
    main_export(src, output=out, task=task, device="cpu", do_validation=False, **kw)
    files = sorted(f for f in os.listdir(out) if f.endswith(".onnx"))
    if not files:
        raise RuntimeError(f"optimum wrote no .onnx file: {os.listdir(out)}")
    for f in files:
        stem = f[:-5]
        name = prefix + ".onnx" if stem == "model" else f"{prefix}__{stem}.onnx"
        inline_external_data(os.path.join(out, f), ctx.path(name))
        note = (notes or {}).get(stem, "")
        pinned = pin_input_dims(ctx.path(name), pin) if pin else ""
        ctx.file(name, "; ".join(x for x in (note, pinned) if x), task=task)
    ctx.exporter("optimum-onnx main_export (" + versions("optimum-onnx", "optimum", "transformers", "torch") + ")")


def _bert_config():
    from transformers import BertConfig

    return BertConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=128, type_vocab_size=4)


def _gpt2_config():
    from transformers import GPT2Config

    return GPT2Config(vocab_size=256, n_embd=32, n_layer=2, n_head=4, n_positions=128, n_inner=64,
                      bos_token_id=0, eos_token_id=1)


def _decoder_kw():
    return dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=True)


@target("optimum-bert", "bert", "optimum", "encoder, feature-extraction (input_ids, attention_mask, token_type_ids)")
def t_optimum_bert(ctx):
    optimum_export(ctx, "optimum_bert", hf_model("BertModel", _bert_config()), "feature-extraction")


@target("optimum-gpt2", "gpt2", "optimum", "decoder with past key values (text-generation-with-past)")
def t_optimum_gpt2(ctx):
    optimum_export(ctx, "optimum_gpt2", hf_model("GPT2LMHeadModel", _gpt2_config()), "text-generation-with-past")


@target("optimum-llama", "llama", "optimum", "decoder with past, GQA (4 heads, 2 kv heads), rotary")
def t_optimum_llama(ctx):
    from transformers import LlamaConfig

    optimum_export(ctx, "optimum_llama", hf_model("LlamaForCausalLM", LlamaConfig(**_decoder_kw())),
                   "text-generation-with-past")


@target("optimum-qwen2", "qwen2", "optimum", "decoder with past, GQA, qkv bias")
def t_optimum_qwen2(ctx):
    from transformers import Qwen2Config

    optimum_export(ctx, "optimum_qwen2", hf_model("Qwen2ForCausalLM", Qwen2Config(**_decoder_kw())),
                   "text-generation-with-past")


@target("optimum-mistral", "mistral", "optimum", "decoder with past, GQA, sliding window")
def t_optimum_mistral(ctx):
    from transformers import MistralConfig

    optimum_export(ctx, "optimum_mistral",
                   hf_model("MistralForCausalLM", MistralConfig(**_decoder_kw(), sliding_window=64)),
                   "text-generation-with-past")


@target("optimum-phi3", "phi3", "optimum", "decoder with past, fused qkv / gate_up projections")
def t_optimum_phi3(ctx):
    from transformers import Phi3Config

    optimum_export(ctx, "optimum_phi3", hf_model("Phi3ForCausalLM", Phi3Config(**_decoder_kw())),
                   "text-generation-with-past")


_SEQ2SEQ_NOTES = {
    "encoder_model": "encoder",
    "decoder_model": "decoder, first step (no past)",
    "decoder_with_past_model": "decoder step with past key values",
    "decoder_model_merged": "merged decoder: If on use_cache_branch",
}


@target("optimum-t5", "t5", "optimum", "encoder + decoders with past (text2text-generation-with-past)")
def t_optimum_t5(ctx):
    from transformers import T5Config

    cfg = T5Config(vocab_size=256, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                   relative_attention_num_buckets=8, relative_attention_max_distance=32,
                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    optimum_export(ctx, "optimum_t5", hf_model("T5ForConditionalGeneration", cfg), "text2text-generation-with-past",
                   _SEQ2SEQ_NOTES)


@target("optimum-bart", "bart", "optimum", "encoder + decoders with past (text2text-generation-with-past)")
def t_optimum_bart(ctx):
    from transformers import BartConfig

    cfg = BartConfig(vocab_size=256, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                     forced_bos_token_id=None, forced_eos_token_id=None)
    optimum_export(ctx, "optimum_bart", hf_model("BartForConditionalGeneration", cfg),
                   "text2text-generation-with-past", _SEQ2SEQ_NOTES)


@target("optimum-whisper", "whisper", "optimum", "speech seq2seq: conv encoder + decoders with past")
def t_optimum_whisper(ctx):
    from transformers import WhisperConfig

    cfg = WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_source_positions=32, max_target_positions=64, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2, decoder_start_token_id=3, suppress_tokens=[], begin_suppress_tokens=[])
    optimum_export(ctx, "optimum_whisper", hf_model("WhisperForConditionalGeneration", cfg),
                   "automatic-speech-recognition-with-past", _SEQ2SEQ_NOTES, pin={"input_features": {1: 16, 2: 64}},
                   nb_max_frames=64)


@target("optimum-vit", "vit", "optimum", "image classification, patch embedding Conv, 32x32 input")
def t_optimum_vit(ctx):
    from transformers import ViTConfig

    cfg = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=64, num_labels=5)
    optimum_export(ctx, "optimum_vit", hf_model("ViTForImageClassification", cfg), "image-classification",
                   pin={"pixel_values": {1: 3, 2: 32, 3: 32}}, height=32, width=32)


@target("optimum-clip", "clip", "optimum", "text + vision towers, zero-shot image classification")
def t_optimum_clip(ctx):
    from transformers import CLIPConfig

    cfg = CLIPConfig(
        text_config=dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=32, bos_token_id=0, eos_token_id=1,
                         pad_token_id=1),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4),
        projection_dim=32)
    optimum_export(ctx, "optimum_clip", hf_model("CLIPModel", cfg), "zero-shot-image-classification",
                   pin={"pixel_values": {1: 3, 2: 32, 3: 32}}, height=32, width=32)


@target("optimum-wav2vec2", "wav2vec2", "optimum", "CTC speech model: conv feature extractor, grouped pos-conv")
def t_optimum_wav2vec2(ctx):
    from transformers import Wav2Vec2Config

    cfg = Wav2Vec2Config(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, do_stable_layer_norm=False,
                         feat_extract_norm="group", pad_token_id=0)
    optimum_export(ctx, "optimum_wav2vec2", hf_model("Wav2Vec2ForCTC", cfg), "automatic-speech-recognition")


# ---------------------------------------------------------------- torch.onnx: small modules
def torch_modules():
    import torch
    from torch import nn

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1, groups=2), nn.BatchNorm2d(16), nn.ReLU6(),
                nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.Hardswish())
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.pool(self.features(x)).flatten(1)
            return torch.softmax(self.fc(x), dim=-1)

    class Block(nn.Module):
        def __init__(self, d=32, h=4):
            super().__init__()
            self.h = h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mask):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.reshape(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-1, -2)) / (d // self.h) ** 0.5
            causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
            keep = causal[None, None] & mask[:, None, None, :].bool()
            att = att.masked_fill(~keep, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class SmallTransformer(nn.Module):
        def __init__(self, vocab=128, d=32, layers=2, max_len=64):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
            self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, input_ids, attention_mask):
            pos = torch.arange(input_ids.shape[1], device=input_ids.device)
            x = self.tok(input_ids) + self.pos(pos)[None]
            for blk in self.blocks:
                x = blk(x, attention_mask)
            return self.head(self.ln(x))

    class SmallRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(64, 16)
            self.lstm = nn.LSTM(16, 16, num_layers=2, batch_first=True, bidirectional=True)
            self.gru = nn.GRU(32, 16, batch_first=True)
            self.out = nn.Linear(16, 4)

        def forward(self, input_ids):
            x, _ = self.lstm(self.emb(input_ids))
            x, h = self.gru(x)
            return self.out(x), h

    return SmallCNN, SmallTransformer, SmallRNN


def _seeded(cls):
    seed_all()
    return cls().eval()


def _ts_export(model, args, path, input_names, output_names, dynamic_axes, opset=17):
    import torch

    torch.onnx.export(model, args, path, dynamo=False, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


def _torch_ids(b, s, vocab):
    import torch

    g = torch.Generator().manual_seed(SEED)
    return torch.randint(0, vocab, (b, s), generator=g), torch.ones(b, s, dtype=torch.int64)


@target("torchscript-cnn", "cnn", "torch.onnx (TorchScript)", "Conv/BN/pool CNN, dynamic batch/height/width")
def t_ts_cnn(ctx):
    import torch

    cnn, _, _ = torch_modules()
    _ts_export(_seeded(cnn), (torch.randn(2, 3, 32, 32),), ctx.path("torchscript_cnn.onnx"), ["pixel_values"],
               ["probs"], {"pixel_values": {0: "batch_size", 2: "height", 3: "width"}, "probs": {0: "batch_size"}})
    ctx.file("torchscript_cnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch") + ")")


@target("torchscript-transformer", "transformer", "torch.onnx (TorchScript)",
        "hand-written causal transformer, dynamic batch/sequence, mask from shapes")
def t_ts_transformer(ctx):
    _, tr, _ = torch_modules()
    ids, mask = _torch_ids(2, 8, 128)
    _ts_export(_seeded(tr), (ids, mask), ctx.path("torchscript_transformer.onnx"), ["input_ids", "attention_mask"],
               ["logits"], {"input_ids": {0: "batch_size", 1: "sequence_length"},
                            "attention_mask": {0: "batch_size", 1: "sequence_length"},
                            "logits": {0: "batch_size", 1: "sequence_length"}})
    ctx.file("torchscript_transformer.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch") + ")")


@target("torchscript-rnn", "rnn", "torch.onnx (TorchScript)", "bidirectional 2-layer LSTM + GRU")
def t_ts_rnn(ctx):
    _, _, rnn = torch_modules()
    ids, _ = _torch_ids(2, 7, 64)
    _ts_export(_seeded(rnn), (ids,), ctx.path("torchscript_rnn.onnx"), ["input_ids"], ["logits", "h_n"],
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
                if bool(h.sum() > 0):
                    h = h * 0.5
                else:
                    h = h + 1.0
            return h

    seed_all()
    m = torch.jit.script(Recurrent().eval())
    _ts_export(m, (torch.randn(2, 5, 8),), ctx.path("torchscript_scripted_loop.onnx"), ["x"], ["h"],
               {"x": {0: "batch_size", 1: "steps"}, "h": {0: "batch_size"}})
    ctx.file("torchscript_scripted_loop.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) of a torch.jit.script module (" + versions("torch") + ")")


@target("torchscript-bert", "bert", "torch.onnx (TorchScript)",
        "transformers BertModel (eager attention) traced, opset 14: the input the ORT fusions were written for")
def t_ts_bert(ctx, opset=14, name="torchscript_bert.onnx"):
    cfg = _bert_config()
    cfg._attn_implementation = "eager"
    model = hf_model("BertModel", cfg)
    model.config.return_dict = False
    ids, mask = _torch_ids(2, 8, 256)
    axes = {"batch_size": 0, "sequence_length": 1}
    dyn = {n: {v: k for k, v in axes.items()} for n in ("input_ids", "attention_mask", "token_type_ids")}
    dyn["last_hidden_state"] = {0: "batch_size", 1: "sequence_length"}
    dyn["pooler_output"] = {0: "batch_size"}
    _ts_export(model, (ids, mask, mask * 0), ctx.path(name),
               ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"], dyn,
               opset=opset)
    ctx.file(name)
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch", "transformers") + ")")


# ---------------------------------------------------------------- torch.onnx dynamo exports
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
    _dynamo_export(_seeded(cnn), (torch.randn(2, 3, 32, 32),), ctx.path("dynamo_cnn.onnx"), ["pixel_values"],
                   ["probs"], {"x": {0: b, 2: h, 3: w}})
    ctx.file("dynamo_cnn.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-transformer", "transformer", "torch.onnx (dynamo)",
        "hand-written causal transformer via torch.export, dynamic batch/sequence")
def t_dyn_transformer(ctx):
    from torch.export import Dim

    _, tr, _ = torch_modules()
    ids, mask = _torch_ids(2, 8, 128)
    b, s = Dim("batch_size", min=1, max=64), Dim("sequence_length", min=2, max=64)
    _dynamo_export(_seeded(tr), (ids, mask), ctx.path("dynamo_transformer.onnx"), ["input_ids", "attention_mask"],
                   ["logits"], {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: s}})
    ctx.file("dynamo_transformer.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-rnn", "rnn", "torch.onnx (dynamo)",
        "LSTM + GRU via torch.export, dynamic batch; sequence length static (with a sequence Dim, torch.export "
        "keeps `sequence_length` on the input but hard-codes the example's length inside)")
def t_dyn_rnn(ctx):
    from torch.export import Dim

    _, _, rnn = torch_modules()
    ids, _ = _torch_ids(2, 7, 64)
    _dynamo_export(_seeded(rnn), (ids,), ctx.path("dynamo_rnn.onnx"), ["input_ids"], ["logits", "h_n"],
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

    _dynamo_export(_seeded(CondNet), (torch.randn(3, 16),), ctx.path("dynamo_cond.onnx"), ["x"], ["y"],
                   {"x": {0: Dim("batch_size", min=1, max=64)}})
    ctx.file("dynamo_cond.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "onnxscript", "onnx-ir") + ")")


@target("dynamo-llama", "llama", "torch.onnx (dynamo)",
        "transformers LlamaForCausalLM (no cache) via torch.export, dynamic batch/sequence")
def t_dyn_llama(ctx):
    import torch
    from torch.export import Dim
    from transformers import LlamaConfig

    cfg = LlamaConfig(**_decoder_kw(), use_cache=False)
    model = hf_model("LlamaForCausalLM", cfg)

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    ids, mask = _torch_ids(2, 8, 256)
    b, s = Dim("batch_size", min=1, max=64), Dim("sequence_length", min=2, max=64)
    _dynamo_export(Wrap(model).eval(), (ids, mask), ctx.path("dynamo_llama.onnx"), ["input_ids", "attention_mask"],
                   ["logits"], {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: s}})
    ctx.file("dynamo_llama.onnx")
    ctx.exporter("torch.onnx.export(dynamo=True) (" + versions("torch", "transformers", "onnxscript") + ")")


# ---------------------------------------------------------------- torchvision detection
@target("torchvision-ssdlite", "detection", "torch.onnx (TorchScript)",
        "torchvision SSDlite320 MobileNetV3 (width 0.25, weights=None): resize, anchors, NonMaxSuppression")
def t_ssdlite(ctx):
    from functools import partial

    import torch
    from torch import nn
    from torchvision.models import mobilenet_v3_large
    from torchvision.models.detection import _utils as det_utils
    from torchvision.models.detection.anchor_utils import DefaultBoxGenerator
    from torchvision.models.detection.ssd import SSD
    from torchvision.models.detection.ssdlite import SSDLiteHead, _mobilenet_extractor, _normal_init

    seed_all()
    norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
    bb = mobilenet_v3_large(weights=None, width_mult=0.25, reduced_tail=True, norm_layer=norm)
    _normal_init(bb)
    bb = _mobilenet_extractor(bb, 6, norm)
    size = (320, 320)
    anchors = DefaultBoxGenerator([[2, 3] for _ in range(6)], min_ratio=0.2, max_ratio=0.95)
    out_channels = det_utils.retrieve_out_channels(bb, size)
    model = SSD(bb, anchors, size, 4, head=SSDLiteHead(out_channels, anchors.num_anchors_per_location(), 4, norm),
                score_thresh=0.001, nms_thresh=0.55, detections_per_img=50, topk_candidates=50,
                image_mean=[0.5] * 3, image_std=[0.5] * 3).eval()
    img = torch.rand(3, 240, 320, generator=torch.Generator().manual_seed(SEED))
    _ts_export(model, ([img],), ctx.path("torchvision_ssdlite.onnx"), ["image"], ["boxes", "scores", "labels"],
               {"image": {1: "height", 2: "width"}, "boxes": {0: "num_detections"},
                "scores": {0: "num_detections"}, "labels": {0: "num_detections"}})
    ctx.file("torchvision_ssdlite.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch", "torchvision") + ")")


# ---------------------------------------------------------------- onnxruntime transformer optimizer
def _export_to(ctx, fn, name):
    """Run another target's export into ctx.tmp; return the path of `name` there."""
    sub = Ctx(os.path.join(ctx.tmp, "sub-" + name))
    os.makedirs(sub.stage, exist_ok=True)
    fn(sub)
    return sub.path(name)


def _ort_optimize(ctx, src, name, model_type, num_heads, hidden_size, note, **kw):
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
    src = _export_to(ctx, t_ts_bert, "torchscript_bert.onnx")
    _ort_optimize(ctx, src, "ortopt_bert.onnx", "bert", 4, 32, "TorchScript BertModel, model_type=bert")
    src = _export_to(ctx, t_optimum_bert, "optimum_bert.onnx")
    _ort_optimize(ctx, src, "ortopt_optimum_bert.onnx", "bert", 4, 32, "optimum BertModel (sdpa), model_type=bert")
    src = _export_to(ctx, t_optimum_gpt2, "optimum_gpt2.onnx")
    _ort_optimize(ctx, src, "ortopt_gpt2.onnx", "gpt2", 4, 32, "optimum GPT-2 with past, model_type=gpt2")


@target("ort-optimizer-more", "vit/clip/bart", "onnxruntime transformers optimizer",
        "optimize_model(model_type=vit / clip / bart) of optimum's exports: Attention, SkipLayerNormalization, "
        "BiasGelu, QuickGelu where the optimizer fuses them")
def t_ort_opt_more(ctx):
    for fn, src_name, name, model_type in [
            (t_optimum_vit, "optimum_vit.onnx", "ortopt_vit.onnx", "vit"),
            (t_optimum_clip, "optimum_clip.onnx", "ortopt_clip.onnx", "clip"),
            (t_optimum_bart, "optimum_bart__encoder_model.onnx", "ortopt_bart_encoder.onnx", "bart"),
            (t_optimum_bart, "optimum_bart__decoder_model.onnx", "ortopt_bart_decoder.onnx", "bart")]:
        src = _export_to(ctx, fn, src_name)
        _ort_optimize(ctx, src, name, model_type, 4, 32, f"optimum {src_name[:-5]}, model_type={model_type}")


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
        src = _export_to(ctx, fn, src_name)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = ctx.path(name)
        ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
        ctx.file(name, note + ", optimized by an onnxruntime CPU session (level EXTENDED) and saved")
    ctx.exporter("onnxruntime InferenceSession, optimized_model_filepath (" + versions("onnxruntime", "torch") + ")")


# ---------------------------------------------------------------- onnxruntime quantization
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
    bert = _export_to(ctx, t_optimum_bert, "optimum_bert.onnx")
    quantize_dynamic(bert, ctx.path("ortq_dynamic_bert.onnx"), weight_type=QuantType.QInt8)
    ctx.file("ortq_dynamic_bert.onnx", "quantize_dynamic of optimum bert, QInt8 weights")
    sub = Ctx(os.path.join(ctx.tmp, "fused"))
    os.makedirs(sub.stage)
    _ort_optimize(sub, _export_to(ctx, t_ts_bert, "torchscript_bert.onnx"), "fused.onnx", "bert", 4, 32, "")
    quantize_dynamic(sub.path("fused.onnx"), ctx.path("ortq_dynamic_bert_fused.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, extra_options={"DefaultTensorType": 1})  # FLOAT where inference is silent
    ctx.file("ortq_dynamic_bert_fused.onnx", "quantize_dynamic of the ORT-fused bert, per-channel: QAttention, "
             "DynamicQuantizeMatMul")

    # static: the CNN (QDQ and QOperator), the transformer (QDQ, per-channel)
    cnn = _export_to(ctx, t_ts_cnn, "torchscript_cnn.onnx")
    pre = os.path.join(ctx.tmp, "cnn_pre.onnx")
    quant_pre_process(cnn, pre)
    rng = np.random.default_rng(SEED)
    imgs = [{"pixel_values": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)} for _ in range(8)]
    for fmt, name, note in [(QuantFormat.QDQ, "ortq_static_qdq_cnn.onnx", "QuantizeLinear/DequantizeLinear pairs"),
                            (QuantFormat.QOperator, "ortq_static_qop_cnn.onnx", "QLinearConv and friends")]:
        quantize_static(pre, ctx.path(name), RandomReader(imgs), quant_format=fmt, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)
        ctx.file(name, "quantize_static of the TorchScript CNN: " + note)
    tr = _export_to(ctx, t_ts_transformer, "torchscript_transformer.onnx")
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


# ---------------------------------------------------------------- scikit-learn
@target("skl-pipeline", "sklearn", "skl2onnx", "StandardScaler + LogisticRegression pipeline: ai.onnx.ml Scaler, "
        "LinearClassifier, ZipMap (sequence of maps output)")
def t_skl_pipeline(ctx):
    import numpy as np
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    seed_all()
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((120, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=200))]).fit(x, y)
    m = to_onnx(pipe, x[:2], target_opset={"": 17, "ai.onnx.ml": 3})
    with open(ctx.path("skl_scaler_logreg.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    ctx.file("skl_scaler_logreg.onnx", "label + ZipMap probabilities")
    ctx.exporter("skl2onnx (" + versions("skl2onnx", "scikit-learn") + ")")


@target("skl-trees", "sklearn", "skl2onnx", "tree ensembles: RandomForestClassifier (TreeEnsembleClassifier, "
        "zipmap off), GradientBoostingRegressor (TreeEnsembleRegressor), ai.onnx.ml opset 3")
def t_skl_trees(ctx):
    import numpy as np
    from skl2onnx import to_onnx
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier

    seed_all()
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((200, 5)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    rf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=SEED).fit(x, y)
    m = to_onnx(rf, x[:2], target_opset={"": 17, "ai.onnx.ml": 3}, options={id(rf): {"zipmap": False}})
    with open(ctx.path("skl_random_forest.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    ctx.file("skl_random_forest.onnx", "label + probabilities tensor")
    gb = GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=SEED).fit(x, x[:, 0] - x[:, 2])
    m = to_onnx(gb, x[:2], target_opset={"": 17, "ai.onnx.ml": 3})
    with open(ctx.path("skl_gradient_boosting.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    ctx.file("skl_gradient_boosting.onnx", "regression")
    ctx.exporter("skl2onnx (" + versions("skl2onnx", "scikit-learn") + ")")


# ---------------------------------------------------------------- TensorFlow (optional venv)
def _tf_seed():
    import numpy as np
    import tensorflow as tf

    seed_all()
    tf.random.set_seed(SEED)
    tf.keras.utils.set_random_seed(SEED)
    return np, tf


@target("tf2onnx-cnn", "cnn", "tf2onnx", "Keras CNN (NHWC) via tf.function: Transposes around Conv, dynamic batch",
        group="tf")
def t_tf_cnn(ctx):
    np, tf = _tf_seed()
    import tf2onnx

    L = tf.keras.layers
    inp = tf.keras.Input(shape=(32, 32, 3), name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu6")(x)
    x = L.Conv2D(16, 1)(x)
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(10, activation="softmax")(x)
    model = tf.keras.Model(inp, out)
    spec = (tf.TensorSpec((None, 32, 32, 3), tf.float32, name="image"),)

    @tf.function(input_signature=spec)
    def f(image):
        return {"probs": model(image, training=False)}

    tf2onnx.convert.from_function(f, input_signature=spec, opset=17, output_path=ctx.path("tf2onnx_cnn.onnx"))
    ctx.file("tf2onnx_cnn.onnx")
    ctx.exporter("tf2onnx.convert.from_function (" + versions("tf2onnx", "tensorflow-cpu", "keras") + ")")


@target("tf2onnx-lstm", "rnn", "tf2onnx", "Keras Embedding + LSTM via tf.function: while loop -> LSTM or Loop",
        group="tf")
def t_tf_lstm(ctx):
    np, tf = _tf_seed()
    import tf2onnx

    L = tf.keras.layers
    inp = tf.keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = L.Embedding(64, 16)(inp)
    x = L.LSTM(16, return_sequences=True)(x)
    x = L.GRU(8)(x)
    model = tf.keras.Model(inp, L.Dense(3)(x))
    spec = (tf.TensorSpec((None, None), tf.int32, name="tokens"),)

    @tf.function(input_signature=spec)
    def f(tokens):
        return {"logits": model(tokens, training=False)}

    tf2onnx.convert.from_function(f, input_signature=spec, opset=17, output_path=ctx.path("tf2onnx_lstm.onnx"))
    ctx.file("tf2onnx_lstm.onnx")
    ctx.exporter("tf2onnx.convert.from_function (" + versions("tf2onnx", "tensorflow-cpu", "keras") + ")")


# ---------------------------------------------------------------- PaddlePaddle (optional venv)
@target("paddle2onnx-cnn", "cnn", "paddle2onnx", "paddle.nn CNN via paddle.onnx.export, dynamic batch",
        group="paddle")
def t_paddle_cnn(ctx):
    import paddle

    seed_all()
    paddle.seed(SEED)
    nn = paddle.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(), nn.MaxPool2D(2),
                                      nn.Conv2D(8, 16, 3, padding=1), nn.Hardswish(), nn.AdaptiveAvgPool2D(1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            return nn.functional.softmax(self.fc(paddle.flatten(self.body(x), 1)), -1)

    net = Net()
    net.eval()
    spec = [paddle.static.InputSpec([None, 3, 32, 32], "float32", "image")]
    paddle.onnx.export(net, os.path.join(ctx.tmp, "paddle_cnn"), input_spec=spec, opset_version=13)
    inline_external_data(os.path.join(ctx.tmp, "paddle_cnn.onnx"), ctx.path("paddle2onnx_cnn.onnx"))
    ctx.file("paddle2onnx_cnn.onnx")
    ctx.exporter("paddle.onnx.export (" + versions("paddle2onnx", "paddlepaddle") + ")")


# ================================================================ validation (main venv)
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
             "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool",
             "QLinearAveragePool", "QLinearConcat", "QLinearSigmoid", "QLinearLeakyRelu", "QAttention",
             "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "DynamicQuantizeLSTM", "QLinearSoftmax"}
CONTROL_OPS = {"If", "Loop", "Scan", "SequenceMap"}


def model_features(path: str) -> dict:
    import onnx

    m = onnx.load(path, load_external_data=False)
    ops: dict[str, int] = {}

    def walk(g):
        for n in g.node:
            key = (n.domain or "ai.onnx") + "::" + n.op_type
            ops[key] = ops.get(key, 0) + 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        walk(sg)

    walk(m.graph)
    for fn in m.functions:
        walk(fn)
    inits = {i.name for i in m.graph.initializer}

    def sig(vis):
        out = []
        for vi in vis:
            if vi.name in inits:
                continue
            t = vi.type
            kind = t.WhichOneof("value")
            if kind == "tensor_type":
                tt = t.tensor_type
                dims = None
                if tt.HasField("shape"):
                    dims = [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else "?")
                            for d in tt.shape.dim]
                out.append({"name": vi.name, "dtype": onnx.TensorProto.DataType.Name(tt.elem_type).lower(),
                            "shape": dims})
            else:
                out.append({"name": vi.name, "type": kind})
        return out

    ins, outs = sig(m.graph.input), sig(m.graph.output)
    dim_params: list[str] = []
    for v in ins + outs:
        for d in v.get("shape") or []:
            if isinstance(d, str) and d != "?" and d not in dim_params:
                dim_params.append(d)
    ext = any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer)
    return {
        "producer": f"{m.producer_name} {m.producer_version}".strip(),
        "ir_version": m.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "nodes": sum(ops.values()),
        "ops": dict(sorted(ops.items())),
        "functions": len(m.functions),
        "inputs": ins,
        "outputs": outs,
        "dim_params": dim_params,
        "contrib_ops": sorted({k.split("::")[1] for k in ops if not k.startswith(("ai.onnx::", "ai.onnx.ml::"))}),
        "ml_ops": sorted({k.split("::")[1] for k in ops if k.startswith("ai.onnx.ml::")}),
        "control_flow": {k.split("::")[1]: v for k, v in ops.items() if k.split("::")[1] in CONTROL_OPS},
        "quant_ops": sorted({k.split("::")[1] for k in ops if k.split("::")[1] in QUANT_OPS}),
        "external_data": ext,
    }


_PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
_SMALL_B = [3, 4, 6, 8, 9, 10, 12, 14, 15, 16, 18, 20]
SMOKE_CANDIDATES = [
    ("small", None, _PRIMES),
    ("odd", _PRIMES, [67 + 18 * k for k in range(12)]),
    ("mid", _PRIMES, [32 * k for k in _PRIMES]),
    ("mid-b", _SMALL_B, [32 * k for k in _SMALL_B]),
    ("large", _PRIMES, [512 + 64 * k for k in range(12)]),
]


def smoke_run(path: str, sess) -> str:
    """Feed the model under a few assignments of its input symbols, like the shared oracle does.
    Returns 'ok <label> <assignment>' or raises with the last error."""
    import numpy as np

    inputs = sess.get_inputs()
    shapes = []
    symbols: list[str] = []
    batch: set[str] = set()
    fresh = 0
    for i in inputs:
        dims = []
        for k, d in enumerate(i.shape or []):
            if isinstance(d, int) and d >= 0:
                dims.append(d)
                continue
            if not isinstance(d, str) or not d:
                d = f"__fresh{fresh}"
                fresh += 1
            names = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", d) if re.search(r"[-+*/()]", d) else [d]
            for n in names:
                if n not in symbols:
                    symbols.append(n)
            if k == 0 and len(names) == 1:
                batch.add(names[0])
            dims.append(d)
        shapes.append(dims)
    last = None
    for label, bvals, ovals in SMOKE_CANDIDATES:
        env, bi, oi = {}, 0, 0
        for s in symbols:
            if bvals is not None and s in batch:
                env[s] = bvals[bi]
                bi += 1
            else:
                env[s] = ovals[oi]
                oi += 1
        rng = np.random.default_rng(SEED)
        feeds = {}
        try:
            for i, dims in zip(inputs, shapes):
                shape = []
                for d in dims:
                    if isinstance(d, int):
                        shape.append(d)
                    elif d in env:
                        shape.append(env[d])
                    else:
                        shape.append(int(eval(d, {"__builtins__": {}}, dict(env))))  # noqa: S307
                feeds[i.name] = make_feed(np, rng, i.name, i.type, shape)
            sess.run(None, feeds)
            return f"ok ({label}: " + ", ".join(f"{k}={v}" for k, v in env.items()) + ")"
        except Exception as e:  # noqa: BLE001
            last = f"{label}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    raise RuntimeError(f"onnxruntime could not run it under any assignment; last: {last}")


def make_feed(np, rng, name: str, typ: str, shape):
    t = typ[len("tensor("):-1] if typ.startswith("tensor(") else typ
    lname = name.lower()
    if t in ("float", "double", "float16", "bfloat16"):
        dt = {"float": np.float32, "double": np.float64, "float16": np.float16, "bfloat16": np.float32}[t]
        return rng.standard_normal(shape).astype(dt)
    if t == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if t.startswith(("int", "uint")):
        dt = np.dtype(t)
        if "mask" in lname:
            return np.ones(shape, dt)
        if "position_ids" in lname:
            return np.broadcast_to(np.arange(shape[-1] if shape else 1, dtype=dt), shape).copy()
        if lname in ("sr", "sample_rate"):
            return np.full(shape, 16000, dt)
        return rng.integers(0, 4, shape).astype(dt)
    raise TypeError(f"cannot feed {name}: {typ}")


ORT_ONLY_DEFAULT_DOMAIN_OPS = ("SimplifiedLayerNormalization",)


def validate_dir(stage: str) -> dict:
    import onnx
    import onnxruntime as ort

    results = {}
    for f in sorted(os.listdir(stage)):
        if not f.endswith(".onnx"):
            continue
        p = os.path.join(stage, f)
        r: dict = {"ok": False}
        try:
            size = os.path.getsize(p)
            r["size"] = size
            try:
                onnx.checker.check_model(p)
                if size < FULL_CHECK_LIMIT:
                    onnx.checker.check_model(p, full_check=True)
                    r["full_check"] = True
            except onnx.checker.ValidationError as e:
                # the GenAI builder writes onnxruntime's SimplifiedLayerNormalization in ai.onnx, which onnx does
                # not define: onnxruntime's load and run below are the validation then
                if not any(f"No Op registered for {op} " in str(e) for op in ORT_ONLY_DEFAULT_DOMAIN_OPS):
                    raise
                r["checker"] = str(e).splitlines()[0][:200]
            so = ort.SessionOptions()
            so.log_severity_level = 3
            ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])  # loads with the default optimizations
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # and runs as the oracle does
            sess = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
            r["smoke_run"] = smoke_run(p, sess)
            r["features"] = model_features(p)
            r["ok"] = True
        except Exception as e:  # noqa: BLE001
            r["reason"] = f"{type(e).__name__}: {str(e)[:1500]}"
        results[f] = r
    return results


# ================================================================ driver (any python3)
def venv_dir(group: str) -> str:
    base = os.environ.get("GL_CORPUS_VENV") or os.path.join(tempfile.gettempdir(), "gl-corpus", "venv")
    return base if group == "main" else f"{base}-{group}"


def venv_python(group: str) -> str:
    return os.path.join(venv_dir(group), "bin", "python")


def ensure_venv(group: str, skip_install: bool) -> str | None:
    """None if the group's venv is ready, else the reason it is not."""
    req = os.path.join(HERE, REQUIREMENTS[group])
    vd, py = venv_dir(group), venv_python(group)
    with open(req, "rb") as f:
        stamp = hashlib.sha256(f.read() + sys.version.encode() + os.environ.get("GL_CORPUS_PIP_ARGS", "").encode())
    stamp_file = os.path.join(vd, ".gl-corpus-stamp")
    if os.path.exists(py) and os.path.exists(stamp_file) and open(stamp_file).read() == stamp.hexdigest():
        return None
    if skip_install:
        return None if os.path.exists(py) else f"no venv at {vd} (--skip-install)"
    os.makedirs(os.path.dirname(vd), exist_ok=True)
    log = vd + ".install.log"
    print(f"[venv] {group}: installing {REQUIREMENTS[group]} into {vd} (log: {log})", flush=True)
    t0 = time.time()
    try:
        with open(log, "w") as lf:
            if not os.path.exists(py):
                subprocess.run([sys.executable, "-m", "venv", vd], check=True, stdout=lf, stderr=subprocess.STDOUT)
            cmd = [py, "-m", "pip", "install", "--disable-pip-version-check", "-r", req]
            cmd += shlex.split(os.environ.get("GL_CORPUS_PIP_ARGS", ""))
            subprocess.run(cmd, check=True, stdout=lf, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT[group])
    except subprocess.TimeoutExpired:
        return f"pip install timed out after {INSTALL_TIMEOUT[group]} s (log: {log})"
    except subprocess.CalledProcessError:
        tail = [ln for ln in open(log, errors="replace").read().splitlines() if ln.strip()][-3:]
        return "pip install failed: " + " | ".join(tail)
    with open(stamp_file, "w") as f:
        f.write(stamp.hexdigest())
    print(f"[venv] {group}: ready in {time.time() - t0:.0f} s", flush=True)
    return None


def child_env() -> dict:
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", TF_CPP_MIN_LOG_LEVEL="2",
               TF_ENABLE_ONEDNN_OPTS="0", PYTHONWARNINGS="ignore", TRANSFORMERS_VERBOSITY="error")
    return env


def load_manifest() -> list[dict]:
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            return json.load(f)["models"]
    return []


def save_manifest(entries: list[dict]):
    entries = sorted(entries, key=lambda e: e["file"])
    with open(MANIFEST, "w") as f:
        json.dump({"generated_by": "corpus/build.py", "seed": SEED, "models": entries}, f, indent=1)
        f.write("\n")


def exercises(e: dict) -> str:
    ft = e["features"]
    parts = []
    if e.get("note"):
        parts.append(e["note"])
    ops = ", ".join(f"{k} {v}" for k, v in ft["opsets"].items())
    parts.append(f"opsets {ops}; {ft['nodes']} nodes")
    if ft["dim_params"]:
        parts.append("dims " + ", ".join(f"`{d}`" for d in ft["dim_params"]))
    if ft["contrib_ops"]:
        parts.append("contrib " + ", ".join(ft["contrib_ops"]))
    if ft["ml_ops"]:
        parts.append("ai.onnx.ml " + ", ".join(ft["ml_ops"]))
    if ft["control_flow"]:
        parts.append("control flow " + ", ".join(f"{k}×{v}" for k, v in ft["control_flow"].items()))
    if ft["quant_ops"]:
        parts.append("quantized " + ", ".join(ft["quant_ops"]))
    if ft["functions"]:
        parts.append(f"{ft['functions']} local functions")
    nt = [v for v in ft["inputs"] + ft["outputs"] if "type" in v]
    if nt:
        parts.append("non-tensor values " + ", ".join(f"{v['name']} ({v['type']})" for v in nt))
    return "; ".join(parts)


def human(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n < 1 << 20 else f"{n / (1 << 20):.2f} MB"


def write_table():
    entries = load_manifest()
    lines = ["| file | exporter (versions) | family | what it exercises | size |", "|---|---|---|---|---|"]
    for e in entries:
        cell = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines.append(f"| `{e['file']}` | {cell(e['exporter'])} | {e['family']} | {cell(exercises(e))} | "
                     f"{human(e['size'])} |")
    total = sum(e["size"] for e in entries)
    lines.append("")
    lines.append(f"{len(entries)} models, {human(total)} in all.")
    table = "\n".join(lines)
    start, end = "<!-- table:start -->", "<!-- table:end -->"
    text = open(README).read() if os.path.exists(README) else f"# corpus\n\n{start}\n{end}\n"
    if start not in text:
        text += f"\n{start}\n{end}\n"
    a, rest = text.split(start, 1)
    _, b = rest.split(end, 1)
    with open(README, "w") as f:
        f.write(a + start + "\n" + table + "\n" + end + b)


def run_target(t: Target, work: str, timeout: int) -> tuple[list[dict], str | None]:
    """Export in the group's venv, validate in the main venv. Returns (kept entries, failure reason)."""
    stage = os.path.join(work, t.name)
    os.makedirs(stage)
    log = os.path.join(work, t.name + ".log")
    cmd = [venv_python(t.group), os.path.abspath(__file__), "--worker", t.name, "--stage", stage]
    try:
        with open(log, "w") as lf:
            rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=child_env(), timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return [], f"export timed out after {timeout} s (log {log})"
    info_path = os.path.join(stage, "_info.json")
    info = json.load(open(info_path)) if os.path.exists(info_path) else {"files": {}}
    if rc != 0 and not info["files"]:
        lines = [ln for ln in open(log, errors="replace").read().splitlines() if ln.strip()]
        err = next((ln for ln in reversed(lines) if re.match(r"^[A-Za-z_.]+(Error|Exception)\b", ln)), lines[-1] if lines else "")
        return [], f"export failed: {err[:400]} (log {log})"
    vcmd = [venv_python("main"), os.path.abspath(__file__), "--validate", stage]
    vr = subprocess.run(vcmd, capture_output=True, text=True, env=child_env(), timeout=timeout)
    vpath = os.path.join(stage, "_validate.json")
    if vr.returncode != 0 or not os.path.exists(vpath):
        return [], f"validation crashed: {(vr.stderr or vr.stdout)[-400:]}"
    results = json.load(open(vpath))
    kept, problems = [], []
    if info.get("error"):
        problems.append("export partly failed: " + info["error"])
    for f, r in results.items():
        if not r["ok"]:
            problems.append(f"{f} dropped: {r['reason'][:400]}")
            continue
        dst = os.path.join(MODELS, f)
        shutil.copyfile(os.path.join(stage, f), dst)
        data = info["files"].get(f, {}).get("data")
        if data:  # the model's external data file, kept beside it under its own name
            shutil.copyfile(os.path.join(stage, data), os.path.join(MODELS, data))
        with open(dst, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        meta = info["files"].get(f, {})
        kept.append({"file": f, "target": t.name, "family": t.family, "exporter": info.get("exporter", t.exporter),
                     "note": meta.get("note", ""), "size": r["size"], "sha256": sha, "smoke_run": r["smoke_run"],
                     "full_check": r.get("full_check", False),
                     **({"fused": meta["fused"]} if meta.get("fused") else {}),
                     **({"external_data_file": meta["data"]} if meta.get("data") else {}), "features": r["features"]})
    return kept, ("; ".join(problems) or None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true", help="print the targets and exit")
    ap.add_argument("--only", help="comma-separated target names (default: all)")
    ap.add_argument("--skip", help="comma-separated target names to leave out")
    ap.add_argument("--skip-install", action="store_true", help="use the venvs as they are")
    ap.add_argument("--timeout", type=int, default=TARGET_TIMEOUT, help="seconds per target")
    ap.add_argument("--keep-work", action="store_true", help="keep the staging folder and logs")
    ap.add_argument("--table", action="store_true", help="only rewrite README.md's table from the manifest")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--validate", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.worker:
        return worker(a.worker, a.stage)
    if a.validate:
        res = validate_dir(a.validate)
        with open(os.path.join(a.validate, "_validate.json"), "w") as f:
            json.dump(res, f, indent=1)
        return 0
    if a.list:
        for t in TARGETS:
            print(f"{t.name:28} {t.group:7} {t.family:22} {t.exporter:36} {t.note}")
        return 0
    if a.table:
        write_table()
        return 0

    names = by_name()
    chosen = TARGETS
    if a.only:
        want = [n.strip() for n in a.only.split(",") if n.strip()]
        bad = [n for n in want if n not in names]
        if bad:
            print(f"unknown targets: {', '.join(bad)} (see --list)", file=sys.stderr)
            return 2
        chosen = [names[n] for n in want]
    if a.skip:
        drop = {n.strip() for n in a.skip.split(",")}
        chosen = [t for t in chosen if t.name not in drop]

    t_start = time.time()
    groups = []
    for t in chosen:
        if t.group not in groups:
            groups.append(t.group)
    if "main" not in groups:
        groups.insert(0, "main")  # validation runs there
    group_err = {g: ensure_venv(g, a.skip_install) for g in groups}
    for g, err in group_err.items():
        if err:
            print(f"[venv] {g}: SKIPPED: {err}", flush=True)
    if group_err["main"]:
        print("the main venv is not usable; nothing can be built", file=sys.stderr)
        return 1
    t_venv = time.time() - t_start

    os.makedirs(MODELS, exist_ok=True)
    manifest = [] if not a.only and not a.skip else load_manifest()
    if not a.only and not a.skip:
        for f in os.listdir(MODELS):
            if f.endswith((".onnx", ".onnx.data", ".onnx_data")):
                os.remove(os.path.join(MODELS, f))
    work = tempfile.mkdtemp(prefix="gl-corpus-work-")
    failures = []
    for t in chosen:
        if group_err.get(t.group):
            failures.append((t.name, f"{t.group} venv unavailable: {group_err[t.group]}"))
            print(f"[skip] {t.name}: {t.group} venv unavailable", flush=True)
            continue
        t0 = time.time()
        for e in [e for e in manifest if e["target"] == t.name]:
            p = os.path.join(MODELS, e["file"])
            if os.path.exists(p):
                os.remove(p)
            manifest.remove(e)
        kept, problem = run_target(t, work, a.timeout)
        manifest.extend(kept)
        save_manifest(manifest)
        files = ", ".join(f"{e['file']} ({human(e['size'])})" for e in kept) or "nothing"
        print(f"[{'ok' if kept and not problem else 'FAIL' if not kept else 'part'}] {t.name} "
              f"({time.time() - t0:.0f} s): {files}", flush=True)
        if problem:
            print(f"       {problem}", flush=True)
            failures.append((t.name, problem))
    save_manifest(manifest)
    write_table()
    if not a.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work folder: {work}")
    total = sum(e["size"] for e in manifest)
    print(f"\n{len(manifest)} models, {human(total)} in {MODELS}; venvs {t_venv:.0f} s, "
          f"total {time.time() - t_start:.0f} s")
    if failures:
        print("skipped / failed:")
        for n, why in failures:
            print(f"  {n}: {why}")
    return 0


_SHIM = None


# ---------------------------------------------------------------- onnxruntime GenAI model builder
def _tiny_tokenizer(path: str, vocab_size: int):
    """A word-level tokenizer of `vocab_size` tokens: the builder reads one from the model folder (offline)."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab_size)}, unk_token="t0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", bos_token="t1",
                                                eos_token="t2", pad_token="t0")
    fast.save_pretrained(path)


def _genai_oracle_dims(path: str) -> str:
    """GroupQueryAttention on CPU runs a prompt after a past only at batch 1, and reads the total length from the
    attention mask: pin batch_size to 1 and say that the mask is past + new tokens long, so that feeds made from
    the input symbols (the validation here, the shared oracle) are ones the model accepts."""
    import onnx

    m = onnx.load(path, load_external_data=False)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].dim_param == "batch_size":
            dims[0].Clear()
            dims[0].dim_value = 1
        if vi.name == "attention_mask" and len(dims) == 2 and dims[1].dim_param == "total_sequence_length":
            dims[1].dim_param = "past_sequence_length + sequence_length"
    onnx.save(m, path)
    return ("input dims pinned for runs: batch_size=1, attention_mask[1] `total_sequence_length` = "
            "`past_sequence_length + sequence_length`")


@target("genai-builder", "llama/qwen2/phi3", "onnxruntime-genai model builder",
        "int4 CPU decoders (MatMulNBits, GroupQueryAttention, SkipSimplifiedLayerNormalization, rotary caches), "
        "external data kept beside the model")
def t_genai(ctx):
    import runpy

    import onnx
    import transformers

    for arch, cls, config, extra in [
            ("llama", "LlamaForCausalLM", transformers.LlamaConfig, {}),
            ("qwen2", "Qwen2ForCausalLM", transformers.Qwen2Config, {}),
            # Phi-3 mini (one rotary cache): the builder takes LongRoPE when the two lengths differ
            ("phi3", "Phi3ForCausalLM", transformers.Phi3Config, {"original_max_position_embeddings": 128})]:
        kw = {**_decoder_kw(), **extra}
        src, out = os.path.join(ctx.tmp, arch + "-src"), os.path.join(ctx.tmp, arch + "-onnx")
        hf_model(cls, config(**kw)).save_pretrained(src)
        _tiny_tokenizer(src, kw["vocab_size"])
        argv = sys.argv
        sys.argv = ["builder", "-i", src, "-o", out, "-p", "int4", "-e", "cpu", "-c", os.path.join(ctx.tmp, "cache")]
        try:
            runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__")
        finally:
            sys.argv = argv
        name = f"genai_{arch}_int4.onnx"
        m = onnx.load(os.path.join(out, "model.onnx"), load_external_data=True)
        onnx.save(m, ctx.path(name), save_as_external_data=True, all_tensors_to_one_file=True,
                  location=name + ".data", size_threshold=1024)
        ctx.file(name, _genai_oracle_dims(ctx.path(name)), data=name + ".data")
    ctx.exporter("onnxruntime_genai.models.builder (" + versions("onnxruntime-genai", "transformers", "torch") + ")")


def worker(name: str, stage: str) -> int:
    t = by_name()[name]
    if t.group == "main":
        global _SHIM
        _SHIM = torchvision_shim()  # keep the Library alive: its ops go away with it
    ctx = Ctx(stage)
    rc = 0
    try:
        t.fn(ctx)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        ctx.info["error"] = traceback.format_exc().strip().splitlines()[-1][:400]
        rc = 1
    with open(os.path.join(stage, "_info.json"), "w") as f:
        json.dump(ctx.info, f, indent=1)
    shutil.rmtree(ctx.tmp, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
