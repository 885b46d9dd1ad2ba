"""The targets: what each builds (name, family, exporter, note), which venv group runs it, and the function that
exports it. Each exporter family is one `from_*` module whose functions register themselves with `@target`;
`load_targets` imports them in build order (FAMILIES). Standard library only: `--list` needs no venv."""
from __future__ import annotations

import importlib

# the exporter families, in the order their targets are built and listed
FAMILIES = ("from_optimum", "from_torchscript", "from_dynamo", "from_torchvision", "from_ort_optimizer",
            "from_ort_quantization", "from_skl2onnx", "from_tf2onnx", "from_paddle2onnx", "from_genai_builder")


class Target:
    def __init__(self, name, group, family, exporter, note, fn):
        self.name, self.group, self.family, self.exporter, self.note, self.fn = name, group, family, exporter, note, fn


TARGETS: list[Target] = []


def target(name, family, exporter, note, group="main"):
    def deco(fn):
        TARGETS.append(Target(name, group, family, exporter, note, fn))
        return fn

    return deco


def load_targets() -> list[Target]:
    for family in FAMILIES:
        importlib.import_module(f"{__package__}.{family}")
    return TARGETS


def by_name() -> dict[str, Target]:
    load_targets()
    return {t.name: t for t in TARGETS}
