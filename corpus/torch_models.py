"""Small torch modules (CNN, causal transformer, LSTM + GRU) and the torch.onnx helpers that the TorchScript,
dynamo and torchvision families share."""
from __future__ import annotations

from . import SEED
from .kit import seed_all


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


def seeded(cls):
    seed_all()
    return cls().eval()


def ts_export(model, args, path, input_names, output_names, dynamic_axes, opset=17):
    import torch

    torch.onnx.export(model, args, path, dynamo=False, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


def torch_ids(b, s, vocab):
    import torch

    g = torch.Generator().manual_seed(SEED)
    return torch.randint(0, vocab, (b, s), generator=g), torch.ones(b, s, dtype=torch.int64)
