"""skl2onnx: a scikit-learn pipeline (ai.onnx.ml Scaler, LinearClassifier, ZipMap) and tree ensembles."""
from __future__ import annotations

from . import SEED
from .kit import seed_all, versions
from .registry import target

OPSETS = {"": 17, "ai.onnx.ml": 3}


def _features(n: int, cols: int):
    """Seeded float32 features, shape [n, cols]."""
    import numpy as np

    seed_all()
    return np.random.default_rng(SEED).standard_normal((n, cols)).astype(np.float32)


def _export(ctx, estimator, x, name: str, note: str, **options) -> None:
    """One fitted estimator through skl2onnx.to_onnx into ctx (`options`: skl2onnx's per-estimator options)."""
    from skl2onnx import to_onnx

    m = to_onnx(estimator, x[:2], target_opset=OPSETS, **({"options": {id(estimator): options}} if options else {}))
    with open(ctx.path(name), "wb") as f:
        f.write(m.SerializeToString())
    ctx.file(name, note)
    ctx.exporter("skl2onnx (" + versions("skl2onnx", "scikit-learn") + ")")


@target("skl-pipeline", "sklearn", "skl2onnx", "StandardScaler + LogisticRegression pipeline: ai.onnx.ml Scaler, "
        "LinearClassifier, ZipMap (sequence of maps output)")
def t_skl_pipeline(ctx):
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    x = _features(120, 6)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=200))]).fit(x, y)
    _export(ctx, pipe, x, "skl_scaler_logreg.onnx", "label + ZipMap probabilities")


@target("skl-trees", "sklearn", "skl2onnx", "tree ensembles: RandomForestClassifier (TreeEnsembleClassifier, "
        "zipmap off), GradientBoostingRegressor (TreeEnsembleRegressor), ai.onnx.ml opset 3")
def t_skl_trees(ctx):
    import numpy as np
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier

    x = _features(200, 5)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    rf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=SEED).fit(x, y)
    _export(ctx, rf, x, "skl_random_forest.onnx", "label + probabilities tensor", zipmap=False)
    gb = GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=SEED).fit(x, x[:, 0] - x[:, 2])
    _export(ctx, gb, x, "skl_gradient_boosting.onnx", "regression")
