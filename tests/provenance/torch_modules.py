"""Small torch modules whose exports graphlsp has findings on: each line that makes the op it is about is marked
with a `# makes:` comment, so the tests know the exact line a finding must point to."""

import torch


class TracedReshape(torch.nn.Module):
    """A Reshape whose target the tracer writes as the example's sizes: it pins the batch (GL321)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        return y.reshape(2, 12)  # makes: Reshape


class PositionTable(torch.nn.Module):
    """A learned position table of 16 rows, sliced to the sequence: longer sequences fail (GL320)."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        table = self.pos[: x.shape[1]]
        return x + table  # makes: Add


class StridedConcat(torch.nn.Module):
    """Every other row and the rows between, side by side: only even lengths agree (GL320)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        even = x[:, ::2]
        odd = x[:, 1::2]
        return torch.cat([even, odd], dim=-1)  # makes: Concat

