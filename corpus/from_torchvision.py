"""torchvision detection through torch.onnx (TorchScript): SSDlite with its resize, anchors and NonMaxSuppression
(the nms kernel comes from kit.torchvision_shim where torchvision's own does not load)."""
from __future__ import annotations

from . import SEED
from .kit import seed_all, versions
from .registry import target
from .torch_models import ts_export


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
    ts_export(model, ([img],), ctx.path("torchvision_ssdlite.onnx"), ["image"], ["boxes", "scores", "labels"],
               {"image": {1: "height", 2: "width"}, "boxes": {0: "num_detections"},
                "scores": {0: "num_detections"}, "labels": {0: "num_detections"}})
    ctx.file("torchvision_ssdlite.onnx")
    ctx.exporter("torch.onnx.export(dynamo=False) (" + versions("torch", "torchvision") + ")")
