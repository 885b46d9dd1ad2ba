"""torch's FLOP counter against `graphlsp cost --dim` on the ONNX export of the same module.

    .venv/bin/python tools/cost_torch.py [--json OUT] [--keep DIR] [NAME...]

For each torch model below (convnets, a U-Net, a YOLO-style detector, a ViT, a causal transformer, a decoder LLM
with its past, an LSTM; BERT, GPT-2 and Whisper from transformers when it is installed), at two input sizes:

1. `torch.utils.flop_counter.FlopCounterMode` counts the module's forward pass (its conventions: mm, bmm, addmm,
   baddbmm 2*M*N*K; convolution 2 * batch * prod(W) * prod(output spatial); scaled dot-product attention two bmm;
   nothing else), by aten op.
2. The module is exported once to ONNX (TorchScript exporter, opset 17, the input sizes as named dims) and
   `graphlsp cost MODEL --dim NAME=SIZE ... --by op --format json` runs on it at the same sizes.
3. graphlsp's FLOPs of the ops the counter covers (MatMul, Gemm, Conv, ConvTranspose, Einsum, the attention ops,
   LSTM/GRU) must equal torch's total; graphlsp's other ops (element-wise, softmax, normalisations, pooling,
   reductions) are what torch does not count, listed per op.

transformers is no dependency of graphlsp's tests: `pip install transformers` into the venv for the three models
that need it. Exit 1 when a covered count differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# GRU: torch's CPU GRU decomposes into addmm, which the counter counts; its LSTM runs one aten op (mkldnn's) that
# it does not count: an LSTM is the difference explained, not covered
COVERED = {"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "com.microsoft.Attention", "Attention",
           "com.microsoft.MultiHeadAttention", "com.microsoft.GroupQueryAttention", "GRU"}  # fmt: skip
# exported with torch.export (dynamo=True): the TorchScript exporter traces nn.MultiheadAttention's reshapes with the
# example's sizes (the ViT export then fails at any other image size) and has no aten::diff (Whisper)
DYNAMO = {"vit", "whisper"}


# ---------------------------------------------------------------- models
def _models(hf: bool = True) -> dict[str, Callable[[], Any]]:
    """Every model by name; `hf`: with the three of transformers (when it is installed)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    torch.manual_seed(0)

    def conv_bn(cin: int, cout: int, k: int = 3, s: int = 1, g: int = 1) -> nn.Module:
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class Basic(nn.Module):
        def __init__(self, cin: int, cout: int, s: int) -> None:
            super().__init__()
            self.a, self.b = conv_bn(cin, cout, 3, s), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.down = nn.Conv2d(cin, cout, 1, s, bias=False) if s != 1 or cin != cout else nn.Identity()

        def forward(self, x: Any) -> Any:
            return F.relu(self.b(self.a(x)) + self.down(x))

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 16, 7, 2), nn.MaxPool2d(3, 2, 1))
            self.layers = nn.Sequential(Basic(16, 16, 1), Basic(16, 32, 2), Basic(32, 64, 2), Basic(64, 128, 2))
            self.fc = nn.Linear(128, 100)

        def forward(self, x: Any) -> Any:
            return self.fc(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1).flatten(1))

    class MobileNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list[nn.Module] = [conv_bn(3, 16, 3, 2)]
            c = 16
            for cout, s in ((24, 2), (32, 2), (64, 2), (96, 1)):
                layers += [conv_bn(c, c * 4, 1), conv_bn(c * 4, c * 4, 3, s, g=c * 4),
                           nn.Conv2d(c * 4, cout, 1, bias=False), nn.BatchNorm2d(cout)]  # fmt: skip
                c = cout
            self.features = nn.Sequential(*layers)
            self.se = nn.Sequential(nn.Linear(c, c // 4), nn.ReLU(), nn.Linear(c // 4, c), nn.Hardsigmoid())
            self.fc = nn.Linear(c, 10)

        def forward(self, x: Any) -> Any:
            f = self.features(x)
            w = self.se(f.mean((2, 3)))
            return self.fc((f * w[:, :, None, None]).mean((2, 3)))

    class VGG(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.f = nn.Sequential(conv_bn(3, 16), conv_bn(16, 16), nn.MaxPool2d(2), conv_bn(16, 32), conv_bn(32, 32),
                                   nn.MaxPool2d(2), conv_bn(32, 64), nn.AdaptiveAvgPool2d(1))  # fmt: skip
            self.fc = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))

        def forward(self, x: Any) -> Any:
            return self.fc(self.f(x).flatten(1))

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.d1, self.d2 = conv_bn(3, 16), conv_bn(16, 32, 3, 2)
            self.mid = conv_bn(32, 32)
            self.up = nn.ConvTranspose2d(32, 16, 2, 2)
            self.out = nn.Conv2d(32, 2, 1)

        def forward(self, x: Any) -> Any:
            a = self.d1(x)
            b = self.mid(self.d2(a))
            return self.out(torch.cat([a, self.up(b)], 1))

    class C2f(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.cv1, self.m, self.cv2 = conv_bn(c, c, 1), conv_bn(c // 2, c // 2), conv_bn(c + c // 2, c, 1)

        def forward(self, x: Any) -> Any:
            a, b = self.cv1(x).chunk(2, 1)
            return self.cv2(torch.cat([a, b, self.m(b)], 1))

    class Yolo(nn.Module):
        """A YOLOv8-shaped detector: strided backbone of C2f blocks, SPPF, a top-down neck with nearest upsampling
        and concatenation, and a detection head per scale."""

        def __init__(self) -> None:
            super().__init__()
            self.s1 = nn.Sequential(conv_bn(3, 16, 3, 2), conv_bn(16, 32, 3, 2), C2f(32))
            self.s2 = nn.Sequential(conv_bn(32, 64, 3, 2), C2f(64))
            self.s3 = nn.Sequential(conv_bn(64, 64, 3, 2), C2f(64))
            self.sppf = conv_bn(256, 64, 1)
            self.top = C2f(128)
            self.head = nn.ModuleList([nn.Conv2d(64, 21, 1), nn.Conv2d(128, 21, 1)])

        def forward(self, x: Any) -> Any:
            p3 = self.s2(self.s1(x))
            p4 = self.s3(p3)
            y1 = F.max_pool2d(p4, 5, 1, 2)
            y2 = F.max_pool2d(y1, 5, 1, 2)
            p4 = self.sppf(torch.cat([p4, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))
            n3 = self.top(torch.cat([F.interpolate(p4, scale_factor=2.0, mode="nearest"), p3], 1))
            a, b = self.head[0](p4), self.head[1](n3)
            return torch.cat([a.flatten(2), b.flatten(2)], 2)

    class ViT(nn.Module):
        def __init__(self, d: int = 64, layers: int = 2) -> None:
            super().__init__()
            self.patch = nn.Conv2d(3, d, 8, 8)
            self.cls = nn.Parameter(torch.randn(1, 1, d))
            self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(d, 4, 128, 0.0, batch_first=True,
                                                                   norm_first=True) for _ in range(layers))  # fmt: skip
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, 10)

        def forward(self, x: Any) -> Any:
            t = self.patch(x).flatten(2).transpose(1, 2)
            t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1)
            for b in self.blocks:
                t = b(t)
            return self.head(self.ln(t[:, 0]))

    class Llama(nn.Module):
        """A decoder LLM with a past: RMSNorm, rotary embeddings, grouped-query attention (4 query heads, 2 key
        heads), SwiGLU; takes the past keys and values of each layer and returns the present ones."""

        def __init__(self, vocab: int = 256, d: int = 64, layers: int = 2, heads: int = 4, kv: int = 2) -> None:
            super().__init__()
            self.h, self.kv, self.hd = heads, kv, d // heads
            self.emb = nn.Embedding(vocab, d)
            self.q = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
            self.k = nn.ModuleList(nn.Linear(d, kv * self.hd, bias=False) for _ in range(layers))
            self.v = nn.ModuleList(nn.Linear(d, kv * self.hd, bias=False) for _ in range(layers))
            self.o = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
            self.up = nn.ModuleList(nn.Linear(d, 2 * 128, bias=False) for _ in range(layers))
            self.down = nn.ModuleList(nn.Linear(128, d, bias=False) for _ in range(layers))
            self.head = nn.Linear(d, vocab, bias=False)

        @staticmethod
        def rms(x: Any) -> Any:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

        def rope(self, x: Any, start: Any) -> Any:
            s = x.shape[2]
            pos = torch.arange(s, dtype=torch.float32) + start
            inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2, dtype=torch.float32) / self.hd))
            ang = pos[:, None] * inv[None]
            cos, sin = ang.cos(), ang.sin()
            a, b = x[..., ::2], x[..., 1::2]
            return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)

        def forward(self, ids: Any, pk0: Any, pv0: Any, pk1: Any, pv1: Any) -> Any:
            x = self.emb(ids)
            b, s, _ = x.shape
            past = [(pk0, pv0), (pk1, pv1)]
            out = []
            start = pk0.shape[2]
            for i in range(len(self.q)):
                h = self.rms(x)
                q = self.q[i](h).view(b, s, self.h, self.hd).transpose(1, 2)
                k = self.k[i](h).view(b, s, self.kv, self.hd).transpose(1, 2)
                v = self.v[i](h).view(b, s, self.kv, self.hd).transpose(1, 2)
                q, k = self.rope(q, start), self.rope(k, start)
                k = torch.cat([past[i][0], k], 2)
                v = torch.cat([past[i][1], v], 2)
                out += [k, v]
                rep = self.h // self.kv
                kk, vv = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
                att = (q @ kk.transpose(-1, -2)) / self.hd**0.5
                y = (att.softmax(-1) @ vv).transpose(1, 2).reshape(b, s, -1)
                x = x + self.o[i](y)
                g, u = self.up[i](self.rms(x)).chunk(2, -1)
                x = x + self.down[i](F.silu(g) * u)
            return (self.head(self.rms(x)), *out)

    class Recurrent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(16, 32, batch_first=True)
            self.fc = nn.Linear(32, 4)

        def forward(self, x: Any) -> Any:
            return self.fc(self.lstm(x)[0])

    sys.path.insert(0, str(ROOT))
    from corpus.torch_models import torch_modules

    small_cnn, small_transformer, small_rnn = torch_modules()

    def image(name: str, cls: Callable[[], nn.Module], c: int = 3) -> Any:
        axes = {"images": {0: "batch", 2: "height", 3: "width"}}
        return lambda: (cls(), lambda n, hw: ((torch.randn(n, c, hw, hw),), axes, {"batch": n, "height": hw,
                        "width": hw}), ["images"], [(1, 64), (2, 96)])  # fmt: skip

    def llama() -> Any:
        m = Llama()

        def inputs(n: int, s: int) -> Any:
            p = 3 * s
            args = (torch.randint(0, 256, (n, s)), *(torch.randn(n, 2, p, 16) for _ in range(4)))
            dyn = {"ids": {0: "batch", 1: "seq"}, **{k: {0: "batch", 2: "past"} for k in ("pk0", "pv0", "pk1", "pv1")}}
            return args, dyn, {"batch": n, "seq": s, "past": p}

        return m, inputs, ["ids", "pk0", "pv0", "pk1", "pv1"], [(1, 5), (2, 9)]

    def causal() -> Any:
        m = small_transformer()
        return m, lambda n, s: ((torch.randint(0, 128, (n, s)), torch.ones(n, s, dtype=torch.int64)),
                                {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
                                {"batch": n, "seq": s}), ["input_ids", "attention_mask"], [(1, 8), (3, 20)]  # fmt: skip

    def recurrent() -> Any:
        return Recurrent(), lambda n, s: ((torch.randn(n, s, 16),), {"x": {0: "batch", 1: "seq"}},
                                          {"batch": n, "seq": s}), ["x"], [(1, 8), (2, 30)]  # fmt: skip

    models: dict[str, Callable[[], Any]] = {
        "resnet": image("resnet", ResNet), "mobilenet": image("mobilenet", MobileNet), "vgg": image("vgg", VGG),
        "unet": image("unet", UNet), "yolo": image("yolo", Yolo), "vit": image("vit", ViT),
        "llama_past": llama, "causal_transformer": causal, "lstm": recurrent,
    }  # fmt: skip
    models["small_cnn"] = image("small_cnn", small_cnn)

    def rnn() -> Any:
        return small_rnn(), lambda n, s: ((torch.randint(0, 64, (n, s)),), {"ids": {0: "batch", 1: "seq"}},
                                          {"batch": n, "seq": s}), ["ids"], [(1, 8), (2, 30)]  # fmt: skip

    models["bi_lstm_gru"] = rnn
    if hf:
        models.update(_hf_models())
    return models


def _hf_models() -> dict[str, Callable[[], Any]]:
    try:
        import transformers
    except ImportError:
        return {}
    import torch

    def text(cls: str, config: Any, extra: bool = False) -> Callable[[], Any]:
        def build() -> Any:
            config._attn_implementation = "eager"
            model = getattr(transformers, cls)(config).eval()

            class Wrapped(torch.nn.Module):
                def __init__(self) -> None:
                    super().__init__()
                    self.m = model

                def forward(self, ids: Any, mask: Any) -> Any:  # every output (BERT's pooler too)
                    out = self.m(input_ids=ids, attention_mask=mask, use_cache=False)
                    return tuple(v for v in out.values() if isinstance(v, torch.Tensor))

            return Wrapped(), lambda n, s: ((torch.randint(0, 200, (n, s)), torch.ones(n, s, dtype=torch.int64)),
                                            {"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}},
                                            {"batch": n, "seq": s}), ["ids", "mask"], [(1, 8), (2, 24)]  # fmt: skip

        return build

    def whisper() -> Any:
        cfg = transformers.WhisperConfig(vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2,
                                         encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                                         decoder_ffn_dim=128, num_mel_bins=16, max_source_positions=64,
                                         max_target_positions=64, decoder_start_token_id=1, pad_token_id=0)  # fmt: skip
        cfg._attn_implementation = "eager"
        model = transformers.WhisperForConditionalGeneration(cfg).eval()

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = model

            def forward(self, mel: Any, ids: Any) -> Any:
                return self.m(input_features=mel, decoder_input_ids=ids, use_cache=False).logits

        # Whisper's encoder takes exactly 2 * max_source_positions frames: the decoder length varies
        return Wrapped(), lambda n, s: ((torch.randn(n, 16, 128), torch.randint(0, 200, (n, s))),
                                        {"mel": {0: "batch"}, "ids": {0: "batch", 1: "seq"}},
                                        {"batch": n, "seq": s}), ["mel", "ids"], [(1, 4), (2, 11)]  # fmt: skip

    bert = transformers.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=128, max_position_embeddings=128)  # fmt: skip
    gpt2 = transformers.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128, n_inner=128)
    return {"bert": text("BertModel", bert), "gpt2": text("GPT2LMHeadModel", gpt2), "whisper": whisper}


# ---------------------------------------------------------------- counting
def torch_count(model: Any, args: tuple[Any, ...]) -> tuple[int, dict[str, int]]:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    # nn.TransformerEncoderLayer's fused fast path and the CPU flash kernel of scaled_dot_product_attention are
    # aten ops the counter has no formula for (it would count 0): count the math path, the same products
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        model(*args)
    by_op = {str(k): int(v) for k, v in counter.get_flop_counts().get("Global", {}).items()}
    return int(counter.get_total_flops()), by_op


def graphlsp_count(path: Path, dims: dict[str, int]) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "graphlsp"
    cmd = [str(exe), "cost", str(path), "--by", "op", "--format", "json"]
    for k, v in dims.items():
        cmd += ["--dim", f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def compare(name: str, build: Callable[[], Any], keep: Path) -> dict[str, Any]:
    import warnings

    import torch

    model, inputs, names, sizes = build()
    model.eval()
    args0, dyn, _ = inputs(*sizes[0])
    path = keep / f"{name}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in DYNAMO:
            from torch.export import Dim

            torch.backends.mha.set_fastpath_enabled(False)
            named = {d: Dim(d, min=16 if d in ("height", "width") else 2)
                     for axes in dyn.values() for d in axes.values()}  # fmt: skip
            args0 = inputs(*sizes[-1])[0]  # torch.export specializes a size of 1
            shapes = {n: {axis: named[d] for axis, d in dyn.get(n, {}).items()} for n in names}
            torch.onnx.export(model, args0, str(path), dynamo=True, input_names=names,
                              dynamic_shapes=tuple(shapes[n] for n in names),
                              optimize=True)  # fmt: skip
        else:
            torch.onnx.export(model, args0, str(path), dynamo=False, opset_version=17, input_names=names,
                              dynamic_axes=dyn)  # fmt: skip
    res: dict[str, Any] = {"model": name, "sizes": []}
    for size in sizes:
        args, _, dims = inputs(*size)
        total, by_op = torch_count(model, args)
        data = graphlsp_count(path, dims)
        rows = {r["name"]: r for r in data["rows"]}
        covered = sum(r["flops_value"] or 0 for n, r in rows.items() if n in COVERED)
        missing = [n for n, r in rows.items() if n in COVERED and r["flops_value"] is None]
        others = {n: r["flops_value"] for n, r in rows.items() if n not in COVERED and r["flops_value"]}
        res["sizes"].append({"dims": dims, "torch": total, "torch_by_op": by_op, "graphlsp_covered": covered,
                             "graphlsp_total": data["totals"]["flops"]["value"], "uncovered_ops": others,
                             "covered_unknown": missing, "equal": covered == total and not missing})  # fmt: skip
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--json")
    p.add_argument("--keep", help="a folder to keep the exported models in")
    args = p.parse_args(argv)
    models = _models()
    names = args.names or list(models)
    keep = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="cost-torch-"))
    keep.mkdir(parents=True, exist_ok=True)
    results, bad = [], 0
    for name in names:
        try:
            r = compare(name, models[name], keep)
        except Exception as e:  # noqa: BLE001
            r = {"model": name, "error": f"{type(e).__name__}: {str(e)[:300]}", "sizes": []}
            bad += 1
        results.append(r)
        if "error" in r:
            print(f"{name:<20} ERROR {r['error']}")
            continue
        for s in r["sizes"]:
            bad += not s["equal"]
            dims = ",".join(f"{k}={v}" for k, v in s["dims"].items())
            other = ", ".join(f"{k} {v:,}" for k, v in sorted(s["uncovered_ops"].items(), key=lambda kv: -kv[1])[:6])
            print(f"{name:<20} {dims:<28} torch {s['torch']:>14,}  graphlsp {s['graphlsp_covered']:>14,}  "
                  f"{'EQUAL' if s['equal'] else 'DIFFERENT'}; graphlsp total {s['graphlsp_total'] or 0:,} (+ {other})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"{len(names)} models, {sum(len(r['sizes']) for r in results)} sizes, {bad} not equal")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
