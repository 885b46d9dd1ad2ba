"""Write corpus/sizes/: small real torch exports whose declared dynamic dims the graph does not honour at every
size, and a few that do, with MANIFEST.json naming each model's symbols and the size assignments to try.

    /path/to/venv-with-torch/bin/python tools/make_size_corpus.py [OUT_DIR]

Each model is exported the way users export (torch.onnx.export, TorchScript tracer, `dynamic_axes`), with random
weights and few channels so that the files stay small. The test tests/infer/test_size_contracts.py runs every
assignment in onnxruntime and compares with `graphlsp check --dim`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def conv(cin: int, cout: int, stride: int = 1) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.ReLU())


class Block(nn.Module):
    """Single-head self-attention and an MLP, as in a transformer layer."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
        x = x + att @ v
        return x + self.mlp(self.norm(x))


class TracedReshape(nn.Module):
    """A head that views its features with the traced batch (`x.view(1, ...)`): runs only at batch 1."""

    def __init__(self) -> None:
        super().__init__()
        self.body = conv(3, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return y.view(1, 3, 2, y.shape[2], y.shape[3])


class TracedReshapeInt(nn.Module):
    """`int(x.shape[0])` freezes the traced batch into the Reshape target: [2, 3, 85, 4, 4] as in YOLO heads."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = int(x.shape[0])
        return x.reshape(b, 3, 85, 4, 4).sigmoid()


class TracedExpand(nn.Module):
    """A learned token expanded to the traced batch (`expand(2, -1, -1)`) and concatenated with the input."""

    def __init__(self) -> None:
        super().__init__()
        self.token = nn.Parameter(torch.randn(1, 1, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tok = self.token.expand(int(x.shape[0]), -1, -1)
        return torch.cat([tok, x], dim=1)


class TracedZeros(nn.Module):
    """A state made with `torch.zeros(int(batch), ...)`: a ConstantOfShape (or Constant) of the traced batch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(int(x.shape[0]), x.shape[1], 8)
        return x + h


class TracedSlice(nn.Module):
    """A mask sliced to the traced length (`mask[:, :16]`) and added to the input: the length must be 16."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mask", torch.randn(1, 64, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = int(x.shape[1])
        return x + self.mask[:, :n]


class PositionTable(nn.Module):
    """BERT's embeddings: position ids sliced from a 64-entry buffer: the sequence length must be at most 64."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(64, 16)
        self.register_buffer("position_ids", torch.arange(64).unsqueeze(0))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = self.position_ids[:, : ids.shape[1]]
        return self.tok(ids) + self.pos(pos)


class ArangePositions(nn.Module):
    """GPT-2's embeddings: position ids from `torch.arange(seq)` gathered from a 32-row table: seq <= 32."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(32, 16)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.tok(ids) + self.pos(torch.arange(ids.shape[1]))


class PastPositions(nn.Module):
    """A decoder step after a cache: positions `arange(past, past + seq)` from a 32-row table: past + seq <= 32."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(32, 16)

    def forward(self, ids: torch.Tensor, past: torch.Tensor) -> torch.Tensor:
        start = past.shape[1]
        pos = torch.arange(start, start + ids.shape[1])
        return torch.cat([past, self.tok(ids) + self.pos(pos)], dim=1)


class BartPositions(nn.Module):
    """bart's learned positions (optimum): `arange(past, past + seq) + 2` read from a table of 32 + 2 rows: past +
    seq <= 32."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(32 + 2, 16)

    def forward(self, ids: torch.Tensor, past: torch.Tensor) -> torch.Tensor:
        start = past.shape[1]
        pos = torch.arange(start, start + ids.shape[1]).expand(ids.shape[0], -1)
        return torch.cat([past, self.tok(ids) + self.pos(pos + 2)], dim=1)


class RobertaPositions(nn.Module):
    """roberta's positions from the padding mask (transformers' `create_position_ids_from_input_ids`):
    `cumsum(ids != pad) * (ids != pad) + pad` read from a table of 32 + 2 rows: seq <= 32 (pad is token 99, so
    that the ids fed are not padding)."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(100, 16)
        self.pos = nn.Embedding(32 + 2, 16, padding_idx=1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = ids.ne(99).int()
        pos = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
        return self.tok(ids) + self.pos(pos)


class ReflectFrames(nn.Module):
    """silero VAD's STFT: the audio reflect-padded by 64 samples on the right, then framed by a strided Conv: the
    audio needs more than 64 samples (onnxruntime: "post-pad (64) exceeds maximum allowed")."""

    def __init__(self) -> None:
        super().__init__()
        self.frames = nn.Conv1d(1, 8, 32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.frames(F.pad(x.unsqueeze(1), (0, 64), mode="reflect"))


class TinyYolo(nn.Module):
    """A strided backbone (5 stride-2 convs) with an FPN: the upsampled /32 branch concatenated with /16."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv(3, 4, 2), conv(4, 4, 2), conv(4, 8, 2), conv(8, 8, 2))
        self.last = conv(8, 8, 2)
        self.head = nn.Conv2d(16, 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p4 = self.stem(x)
        p5 = self.last(p4)
        up = F.interpolate(p5, scale_factor=2.0, mode="nearest")
        return self.head(torch.cat([up, p4], dim=1))


class TinyUNet(nn.Module):
    """Three stride-2 pools down and three transposed convs up, each concatenated with its skip: height and width
    must be multiples of 8."""

    def __init__(self) -> None:
        super().__init__()
        self.d1, self.d2, self.d3 = conv(1, 4), conv(4, 8), conv(8, 8)
        self.bottom = conv(8, 8)
        self.u3 = nn.ConvTranspose2d(8, 8, 2, 2)
        self.u2 = nn.ConvTranspose2d(16, 8, 2, 2)
        self.u1 = nn.ConvTranspose2d(16, 4, 2, 2)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        m = self.bottom(F.max_pool2d(c, 2))
        y = torch.cat([self.u3(m), c], 1)
        y = torch.cat([self.u2(y), b], 1)
        y = torch.cat([self.u1(y), a], 1)
        return self.out(y)


class TinyViT(nn.Module):
    """Patches of 8 from a 32x32 image, a class token and learned position embeddings for 1 + 16 tokens: the
    image must be 32x32 (any size with 16 patches)."""

    def __init__(self) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, 16, 8, 8)
        self.cls = nn.Parameter(torch.randn(1, 1, 16))
        self.pos = nn.Parameter(torch.randn(1, 17, 16))
        self.block = Block(16)
        self.head = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.patch(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(p.shape[0], -1, -1), p], dim=1) + self.pos
        return self.head(self.block(tokens)[:, 0])


class FixedChannels(nn.Module):
    """A classifier whose input declares the channels dynamic (`num_channels`), which its first Conv fixes to 3."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(conv(3, 8, 2), conv(8, 8, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class StridedClassifier(nn.Module):
    """A strided CNN with global pooling: it runs at every size (no condition expected)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(conv(3, 8, 2), conv(8, 8, 2), conv(8, 8, 2), nn.AdaptiveAvgPool2d(1),
                                  nn.Flatten(), nn.Linear(8, 4))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class DynamicReshape(nn.Module):
    """A head that views with the runtime batch (`x.view(x.shape[0], ...)`): runs at every batch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], 3, -1).softmax(-1)


class TinyEncoder(nn.Module):
    """A transformer encoder layer over [batch, seq, 16]: runs at every size."""

    def __init__(self) -> None:
        super().__init__()
        self.block = Block(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x)


class SkipAdd(nn.Module):
    """A stride-2 branch upsampled by 2 and added to its input: height and width must be even."""

    def __init__(self) -> None:
        super().__init__()
        self.down = conv(4, 4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + F.interpolate(self.down(x), scale_factor=2.0, mode="nearest")


class TinyLSTM(nn.Module):
    """An LSTM over [batch, seq, 8] with a linear head: runs at every size."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(8, 8, batch_first=True)
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.rnn(x)[0])


class WindowPad(nn.Module):
    """Swin's window padding: `F.pad` to a multiple of the window (7) with pads computed from the input's size,
    then a window partition: runs at every size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[2], x.shape[3]
        x = F.pad(x, (0, (7 - w % 7) % 7, 0, (7 - h % 7) % 7))
        b, c, hp, wp = x.shape
        return x.view(b, c, hp // 7, 7, wp // 7, 7).permute(0, 2, 4, 1, 3, 5).reshape(-1, c, 7, 7)


IMG = {0: "batch", 2: "height", 3: "width"}
MODELS = {
    # name: (module, example input(s), input names, dynamic axes, assignments to try)
    "traced_reshape": (TracedReshape(), (torch.randn(1, 3, 8, 8),), ["x"], {"x": IMG},
                       [{"batch": 1, "height": 8, "width": 8}, {"batch": 2, "height": 8, "width": 8},
                        {"batch": 1, "height": 16, "width": 12}, {"batch": 4, "height": 16, "width": 16}]),
    "traced_reshape_int": (TracedReshapeInt(), (torch.randn(2, 3 * 85, 4, 4),), ["x"], {"x": {0: "batch"}},
                           [{"batch": 2}, {"batch": 1}, {"batch": 3}, {"batch": 8}]),
    "traced_expand": (TracedExpand(), (torch.randn(2, 5, 8),), ["x"], {"x": {0: "batch", 1: "seq"}},
                      [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 5}, {"batch": 2, "seq": 9}, {"batch": 3, "seq": 4}]),
    "traced_zeros": (TracedZeros(), (torch.randn(2, 5, 8),), ["x"], {"x": {0: "batch", 1: "seq"}},
                     [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 5}, {"batch": 2, "seq": 7}, {"batch": 4, "seq": 3}]),
    "traced_slice": (TracedSlice(), (torch.randn(1, 16, 8),), ["x"], {"x": {0: "batch", 1: "seq"}},
                     [{"batch": 1, "seq": 16}, {"batch": 3, "seq": 16}, {"batch": 1, "seq": 8},
                      {"batch": 1, "seq": 20}]),
    "position_table": (PositionTable(), (torch.randint(0, 100, (2, 10)),), ["ids"], {"ids": {0: "batch", 1: "seq"}},
                       [{"batch": 2, "seq": 10}, {"batch": 1, "seq": 64}, {"batch": 1, "seq": 65},
                        {"batch": 3, "seq": 100}]),
    "arange_positions": (ArangePositions(), (torch.randint(0, 100, (2, 10)),), ["ids"],
                         {"ids": {0: "batch", 1: "seq"}},
                         [{"batch": 2, "seq": 10}, {"batch": 1, "seq": 32}, {"batch": 1, "seq": 33},
                          {"batch": 2, "seq": 100}]),
    "past_positions": (PastPositions(), (torch.randint(0, 100, (1, 3)), torch.randn(1, 5, 16)), ["ids", "past"],
                       {"ids": {0: "batch", 1: "seq"}, "past": {0: "batch", 1: "past_len"}},
                       [{"batch": 1, "seq": 3, "past_len": 5}, {"batch": 2, "seq": 1, "past_len": 31},
                        {"batch": 1, "seq": 1, "past_len": 32}, {"batch": 1, "seq": 20, "past_len": 20}]),
    "tiny_yolo": (TinyYolo(), (torch.randn(1, 3, 64, 64),), ["images"], {"images": IMG},
                  [{"batch": 1, "height": 64, "width": 64}, {"batch": 1, "height": 48, "width": 64},
                   {"batch": 2, "height": 96, "width": 160}, {"batch": 1, "height": 64, "width": 40},
                   {"batch": 1, "height": 50, "width": 64}]),
    "tiny_unet": (TinyUNet(), (torch.randn(1, 1, 32, 32),), ["x"], {"x": IMG},
                  [{"batch": 1, "height": 32, "width": 32}, {"batch": 1, "height": 36, "width": 32},
                   {"batch": 2, "height": 40, "width": 24}, {"batch": 1, "height": 32, "width": 30}]),
    "tiny_vit": (TinyViT(), (torch.randn(1, 3, 32, 32),), ["pixel_values"], {"pixel_values": IMG},
                 [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 32, "width": 32},
                  {"batch": 1, "height": 64, "width": 64}, {"batch": 1, "height": 16, "width": 64},
                  {"batch": 1, "height": 40, "width": 32}]),
    "fixed_channels": (FixedChannels(), (torch.randn(1, 3, 32, 32),), ["x"],
                       {"x": {0: "batch", 1: "num_channels", 2: "height", 3: "width"}},
                       [{"batch": 1, "num_channels": 3, "height": 32, "width": 32},
                        {"batch": 1, "num_channels": 1, "height": 32, "width": 32},
                        {"batch": 2, "num_channels": 4, "height": 17, "width": 9},
                        {"batch": 2, "num_channels": 3, "height": 17, "width": 9}]),
    "strided_classifier": (StridedClassifier(), (torch.randn(1, 3, 32, 32),), ["x"], {"x": IMG},
                           [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 17, "width": 45},
                            {"batch": 3, "height": 8, "width": 100}, {"batch": 1, "height": 224, "width": 224}]),
    "dynamic_reshape": (DynamicReshape(), (torch.randn(2, 6, 4),), ["x"], {"x": {0: "batch", 1: "c", 2: "n"}},
                        [{"batch": 2, "c": 6, "n": 4}, {"batch": 1, "c": 3, "n": 5}, {"batch": 5, "c": 9, "n": 2},
                         {"batch": 3, "c": 6, "n": 7}]),
    "tiny_encoder": (TinyEncoder(), (torch.randn(2, 5, 16),), ["x"], {"x": {0: "batch", 1: "seq"}},
                     [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 1}, {"batch": 3, "seq": 77}, {"batch": 8, "seq": 9}]),
    "tiny_lstm": (TinyLSTM(), (torch.randn(2, 5, 8),), ["x"], {"x": {0: "batch", 1: "seq"}},
                  [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 1}, {"batch": 4, "seq": 33}, {"batch": 7, "seq": 2}]),
    "window_pad": (WindowPad(), (torch.randn(1, 4, 14, 14),), ["x"], {"x": IMG},
                   [{"batch": 1, "height": 14, "width": 14}, {"batch": 2, "height": 9, "width": 20},
                    {"batch": 1, "height": 7, "width": 50}, {"batch": 3, "height": 31, "width": 8}]),
    "skip_add": (SkipAdd(), (torch.randn(1, 4, 16, 16),), ["x"], {"x": IMG},
                 [{"batch": 1, "height": 16, "width": 16}, {"batch": 1, "height": 15, "width": 16},
                  {"batch": 2, "height": 10, "width": 22}, {"batch": 1, "height": 16, "width": 9}]),
    "bart_positions": (BartPositions(), (torch.randint(0, 100, (1, 3)), torch.randn(1, 5, 16)), ["ids", "past"],
                       {"ids": {0: "batch", 1: "seq"}, "past": {0: "batch", 1: "past_len"}},
                       [{"batch": 1, "seq": 3, "past_len": 5}, {"batch": 2, "seq": 1, "past_len": 31},
                        {"batch": 1, "seq": 1, "past_len": 32}, {"batch": 1, "seq": 32, "past_len": 1},
                        {"batch": 2, "seq": 33, "past_len": 1}]),
    "roberta_positions": (RobertaPositions(), (torch.randint(0, 99, (2, 10)),), ["ids"],
                          {"ids": {0: "batch", 1: "seq"}},
                          [{"batch": 2, "seq": 10}, {"batch": 1, "seq": 32}, {"batch": 1, "seq": 33},
                           {"batch": 3, "seq": 100}]),
    "reflect_frames": (ReflectFrames(), (torch.randn(1, 512),), ["x"], {"x": {0: "batch", 1: "sequence"}},
                       [{"batch": 1, "sequence": 512}, {"batch": 2, "sequence": 65}, {"batch": 1, "sequence": 64},
                        {"batch": 1, "sequence": 40}]),
}


ROOT = Path(__file__).resolve().parent.parent


def genai_gqa(out: Path) -> str:
    """onnxruntime-genai's llama (corpus/models) with its batch dynamic again: GroupQueryAttention runs a prompt
    after a past only at batch 1."""
    import onnx

    m = onnx.load(str(ROOT / "corpus" / "models" / "genai_llama_int4.onnx"))
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].HasField("dim_value") and dims[0].dim_value == 1:
            dims[0].Clear()
            dims[0].dim_param = "batch_size"
    onnx.save(m, str(out / "genai_gqa.onnx"))
    return "genai_gqa.onnx"


def nchwc_classifier(out: Path) -> str:
    """fixed_channels after onnxruntime's optimizer at level all: its Convs in the NCHWc layout, the first reading
    the model's NCHW input (its channels checked against the weight)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(out / "nchwc_classifier.onnx")
    ort.InferenceSession(str(out / "fixed_channels.onnx"), options, providers=["CPUExecutionProvider"])
    return "nchwc_classifier.onnx"


# name: (file: a model written here by a function, or one of the corpus / ../shared/realworld by path, doc,
# exporter, assignments; an assignment's "feeds" are values for inputs that are not sizes (a flag, a rate))
REFERENCED = {
    "genai_gqa": (genai_gqa, "onnxruntime-genai's llama with a dynamic batch: GroupQueryAttention needs batch 1, "
                  "one new token, or no past.", "onnxruntime-genai builder (corpus/models), batch unpinned",
                  [{"batch_size": 1, "sequence_length": 3, "past_sequence_length": 4},
                   {"batch_size": 2, "sequence_length": 3, "past_sequence_length": 4},
                   {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 4},
                   {"batch_size": 3, "sequence_length": 2, "past_sequence_length": 2}]),
    "nchwc_classifier": (nchwc_classifier, "A classifier after onnxruntime's optimizer at level all (NCHWc "
                         "Convs): the first Conv fixes the channels to 3.", "onnxruntime optimizer (level all)",
                         [{"batch": 1, "num_channels": 3, "height": 32, "width": 32},
                          {"batch": 1, "num_channels": 1, "height": 32, "width": 32},
                          {"batch": 2, "num_channels": 4, "height": 17, "width": 9},
                          {"batch": 2, "num_channels": 3, "height": 17, "width": 9}]),
    "ortopt_bert": ("../models/ortopt_bert.onnx", "bert after onnxruntime's optimizer: EmbedLayerNormalization "
                    "reads positions 0..S-1 from a 128-row table.", "onnxruntime transformers optimizer",
                    [{"batch_size": 1, "sequence_length": 8}, {"batch_size": 2, "sequence_length": 128},
                     {"batch_size": 1, "sequence_length": 129}, {"batch_size": 2, "sequence_length": 300}]),
    "whisper_merged": ("../models/optimum_whisper__decoder_model_merged.onnx", "whisper's merged decoder "
                       "(optimum): positions past..past+seq from a 64-row table inside its If.", "optimum",
                       [{"batch_size": 1, "decoder_sequence_length": 4, "encoder_sequence_length": 8,
                         "past_decoder_sequence_length": 3, "feeds": {"use_cache_branch": [True]}},
                        {"batch_size": 1, "decoder_sequence_length": 1, "encoder_sequence_length": 8,
                         "past_decoder_sequence_length": 64, "feeds": {"use_cache_branch": [True]}},
                        {"batch_size": 2, "decoder_sequence_length": 65, "encoder_sequence_length": 8,
                         "past_decoder_sequence_length": 1, "feeds": {"use_cache_branch": [False]}},
                        {"batch_size": 1, "decoder_sequence_length": 10, "encoder_sequence_length": 5,
                         "past_decoder_sequence_length": 54, "feeds": {"use_cache_branch": [True]}}]),
    "bart_merged": ("../models/optimum_bart__decoder_model_merged.onnx", "bart's merged decoder (optimum): "
                    "positions past..past+seq, offset by 2, from a 130-row table inside its If.", "optimum",
                    [{"batch_size": 1, "decoder_sequence_length": 4, "encoder_sequence_length": 8,
                      "past_decoder_sequence_length": 3, "feeds": {"use_cache_branch": [True]}},
                     {"batch_size": 1, "decoder_sequence_length": 1, "encoder_sequence_length": 8,
                      "past_decoder_sequence_length": 128, "feeds": {"use_cache_branch": [True]}},
                     {"batch_size": 1, "decoder_sequence_length": 129, "encoder_sequence_length": 8,
                      "past_decoder_sequence_length": 1, "feeds": {"use_cache_branch": [False]}},
                     {"batch_size": 2, "decoder_sequence_length": 1, "encoder_sequence_length": 8,
                      "past_decoder_sequence_length": 127, "feeds": {"use_cache_branch": [True]}}]),
    "roberta": ("../models/optimum_roberta.onnx", "roberta (optimum): positions are the cumulative sum of the "
                "padding mask plus the padding index, from a 66-row table (at most 64 tokens); the token types, a "
                "66-long buffer expanded to the length.", "optimum",
                [{"batch_size": 1, "sequence_length": 8}, {"batch_size": 2, "sequence_length": 64},
                 {"batch_size": 1, "sequence_length": 65}, {"batch_size": 2, "sequence_length": 67},
                 {"batch_size": 3, "sequence_length": 1}]),
    "silero_vad": ("shared:realworld/silero_vad_16k_op15.onnx", "silero VAD (16k, opset 15): the STFT's reflect "
                   "padding needs more than 64 samples, its framing Conv 192, and the LSTM inside an If runs only "
                   "while the squeezed time axis is 1 (at most 703).", "torch (TorchScript)",
                   [{"batch": 1, "sequence": 512, "feeds": {"sr": 16000}},
                    {"batch": 2, "sequence": 512, "feeds": {"sr": 16000}},
                    {"batch": 1, "sequence": 64, "feeds": {"sr": 16000}},
                    {"batch": 1, "sequence": 100, "feeds": {"sr": 16000}},
                    {"batch": 2, "sequence": 1024, "feeds": {"sr": 16000}}]),
    "ppocr_rec": ("shared:realworld/ch_PP-OCRv4_rec_infer.onnx", "PP-OCRv4's recognizer (paddle2onnx): an "
                  "AveragePool whose kernel is taller than small inputs (onnxruntime truncates), and a neck whose "
                  "Reshape holds only up to height 80.", "paddle2onnx",
                  [{"p2o.DynamicDimension.0": 1, "?": 48, "p2o.DynamicDimension.1": 320},
                   {"p2o.DynamicDimension.0": 1, "?": 16, "p2o.DynamicDimension.1": 64},
                   {"p2o.DynamicDimension.0": 2, "?": 32, "p2o.DynamicDimension.1": 100},
                   {"p2o.DynamicDimension.0": 1, "?": 81, "p2o.DynamicDimension.1": 64},
                   {"p2o.DynamicDimension.0": 1, "?": 48, "p2o.DynamicDimension.1": 3}]),
}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "corpus" / "sizes")
    out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, (module, example, inputs, axes, assignments) in MODELS.items():
        module.eval()
        path = out / f"{name}.onnx"
        with torch.no_grad():
            torch.onnx.export(module, example, str(path), input_names=inputs, output_names=["y"],
                              dynamic_axes={**axes, "y": {}}, opset_version=17, dynamo=False)  # fmt: skip
        manifest[name] = {"file": path.name, "doc": (module.__doc__ or "").strip(), "assignments": assignments,
                          "exporter": f"torch {torch.__version__} (TorchScript, dynamic_axes)"}  # fmt: skip
        print(f"{path.name}: {path.stat().st_size} bytes")
    for name, (source, doc, exporter, assignments) in REFERENCED.items():
        file = source(out) if callable(source) else source
        manifest[name] = {"file": file, "doc": doc, "assignments": assignments, "exporter": exporter}
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
