"""What a target function gets (`Ctx`: where to write, where to say how) and the helpers it runs inside its venv:
seeding, exporter versions, external data inlined, another target's export reused, the torchvision shim. Every
third-party import is inside a function: these run in the venv of the target's group."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from . import SEED


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
        with contextlib.suppress(PackageNotFoundError):
            out.append(f"{p} {version(p)}")
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


def export_to(ctx: Ctx, fn, name: str) -> str:
    """Run another target's export into ctx.tmp; return the path of `name` there."""
    sub = Ctx(os.path.join(ctx.tmp, "sub-" + name))
    os.makedirs(sub.stage, exist_ok=True)
    fn(sub)
    return sub.path(name)
