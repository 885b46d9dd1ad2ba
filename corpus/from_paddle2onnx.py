"""paddle2onnx (the optional paddle venv): a paddle.nn CNN through paddle.onnx.export."""
from __future__ import annotations

import os

from . import SEED
from .kit import inline_external_data, seed_all, versions
from .registry import target


@target("paddle2onnx-cnn", "cnn", "paddle2onnx", "paddle.nn CNN via paddle.onnx.export, dynamic batch",
        group="paddle")
def t_paddle_cnn(ctx):
    import paddle

    seed_all()
    paddle.seed(SEED)
    nn = paddle.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(), nn.MaxPool2D(2),
                                      nn.Conv2D(8, 16, 3, padding=1), nn.Hardswish(), nn.AdaptiveAvgPool2D(1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            return nn.functional.softmax(self.fc(paddle.flatten(self.body(x), 1)), -1)

    net = Net()
    net.eval()
    spec = [paddle.static.InputSpec([None, 3, 32, 32], "float32", "image")]
    paddle.onnx.export(net, os.path.join(ctx.tmp, "paddle_cnn"), input_spec=spec, opset_version=13)
    inline_external_data(os.path.join(ctx.tmp, "paddle_cnn.onnx"), ctx.path("paddle2onnx_cnn.onnx"))
    ctx.file("paddle2onnx_cnn.onnx")
    ctx.exporter("paddle.onnx.export (" + versions("paddle2onnx", "paddlepaddle") + ")")
