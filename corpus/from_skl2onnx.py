"""skl2onnx: a scikit-learn pipeline (ai.onnx.ml Scaler, LinearClassifier, ZipMap) and tree ensembles."""
from __future__ import annotations

from . import SEED
from .kit import seed_all, versions
from .registry import target


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
