"""Ops that move, select or make data without arithmetic: 0 FLOPs (their cost is the bytes they read and write,
which every node reports). Resize and Upsample count their interpolation: nothing for `nearest` (a copy), else per
output element and resized axis 2 for `linear` (a product and a sum) and 8 for `cubic` (four of each).
"""

from __future__ import annotations

from graphlsp.cost.formula import numel
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d

FREE = (
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice", "Gather",
    "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND", "Expand", "Tile", "Pad", "Shape",
    "Size", "Cast", "CastLike", "Constant", "ConstantOfShape", "Range", "NonZero", "OneHot", "EyeLike", "Trilu",
    "DepthToSpace", "SpaceToDepth", "ReverseSequence", "Compress", "Unique", "SplitToSequence", "ConcatFromSequence",
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
    "Optional", "OptionalGetElement", "OptionalHasElement", "Dropout", "RandomNormal", "RandomNormalLike",
    "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli", "StringNormalizer", "Col2Im",
)  # fmt: skip


@cost_fn(*FREE)
@cost_fn("GatherBlockQuantized", domain="com.microsoft")
def free(c: Call) -> Work:
    return Work(0, 0, "no arithmetic (data movement)")


@cost_fn("Resize", "Upsample")
def resize(c: Call) -> Work:
    mode = c.attr("mode", "nearest")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode == "nearest":
        return Work(0, 0, "nearest: no arithmetic")
    x, y = c.shape(0), c.out()
    if x is None or y is None or len(x) != len(y):
        return Work(None)
    axes = sum(1 for a, b in zip(x, y, strict=True) if d.equal(a, b) is not True)
    per = (8 if mode == "cubic" else 2) * axes
    return Work(d.mul(numel(y), per), 0, f"{mode}: {per} per output element")
