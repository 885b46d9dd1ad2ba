"""Normalisations and softmax, counted per element of the normalised tensor (no torch convention: its counter
covers only contractions; these are this project's, listed in docs/cost.md).

  BatchNormalization (inference)   2 per element: the scale and the shift (mean and variance are weights)
  LayerNormalization, GroupNormalization, InstanceNormalization, MeanVarianceNormalization
                                   5 per element: the mean (1), the centring (1), the variance (square and add,
                                   2) and the division by the deviation (1); then 1 for the scale and 1 for the
                                   bias when given
  SimplifiedLayerNormalization, RMSNormalization
                                   3 per element (square and add 2, divide 1), 1 more for the scale
  SkipLayerNormalization, SkipSimplifiedLayerNormalization
                                   as the above, 1 more per element for the skip sum, 1 for its bias
  Softmax, LogSoftmax              5 per element: max, subtract, exp, sum, divide (log); Hardmax 1
  EmbedLayerNormalization          9 per output element: two adds of embeddings, then 7 as LayerNormalization
  LpNormalization                  3 per element
"""

from __future__ import annotations

from graphlsp.cost.formula import numel
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d


def _per(c: Call, k: int, note: str) -> Work:
    return Work(d.mul(numel(c.shape(0)), k), 0, note)


@cost_fn("BatchNormalization")
def batch_norm(c: Call) -> Work:
    return _per(c, 2, "2 per element: scale and shift")


@cost_fn("LayerNormalization", "GroupNormalization", "InstanceNormalization", "MeanVarianceNormalization")
@cost_fn("LayerNormalization", "GroupNorm", domain="com.microsoft")
def layer_norm(c: Call) -> Work:
    k = 5 + c.has(1) + c.has(2)
    if c.op == "MeanVarianceNormalization":
        k = 5
    return _per(c, k, f"{k} per element")


@cost_fn("RMSNormalization")
@cost_fn("SimplifiedLayerNormalization", domain="")
@cost_fn("SimplifiedLayerNormalization", domain="com.microsoft")
def rms_norm(c: Call) -> Work:
    k = 3 + c.has(1)
    return _per(c, k, f"{k} per element")


@cost_fn("SkipLayerNormalization", domain="com.microsoft")
def skip_layer_norm(c: Call) -> Work:
    k = 5 + 1 + c.has(2) + c.has(3) + c.has(4)  # skip sum, gamma, beta, bias
    return _per(c, k, f"{k} per element")


@cost_fn("SkipSimplifiedLayerNormalization", domain="com.microsoft")
def skip_rms_norm(c: Call) -> Work:
    k = 3 + 1 + c.has(2) + c.has(3)  # skip sum, gamma, bias
    return _per(c, k, f"{k} per element")


@cost_fn("EmbedLayerNormalization", "QEmbedLayerNormalization", domain="com.microsoft")
def embed_layer_norm(c: Call) -> Work:
    """The embeddings' gathers are free; their sum (2 adds with the position and segment embeddings) and the layer
    normalisation with scale and bias (7) per output element."""
    return Work(d.mul(numel(c.out()), 9), 0, "9 per output element")


@cost_fn("Softmax", "LogSoftmax")
@cost_fn("QLinearSoftmax", domain="com.microsoft")
def softmax(c: Call) -> Work:
    return _per(c, 5, "5 per element: max, subtract, exp, sum, divide")


@cost_fn("Hardmax")
def hardmax(c: Call) -> Work:
    return _per(c, 1, "1 per element")


@cost_fn("LpNormalization")
def lp_norm(c: Call) -> Work:
    return _per(c, 3, "3 per element")
