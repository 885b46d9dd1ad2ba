"""models/MANIFEST.json (what was kept: exporter versions, features, size, sha256) and README.md's table, which
is generated from it."""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import MANIFEST, README, SEED


def load_manifest() -> list[dict]:
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            return json.load(f)["models"]
    return []


def save_manifest(entries: list[dict]):
    entries = sorted(entries, key=lambda e: e["file"])
    with open(MANIFEST, "w") as f:
        json.dump({"generated_by": "corpus/build.py", "seed": SEED, "models": entries}, f, indent=1)
        f.write("\n")


def exercises(e: dict) -> str:
    ft = e["features"]
    parts = []
    if e.get("note"):
        parts.append(e["note"])
    ops = ", ".join(f"{k} {v}" for k, v in ft["opsets"].items())
    parts.append(f"opsets {ops}; {ft['nodes']} nodes")
    if ft["dim_params"]:
        parts.append("dims " + ", ".join(f"`{d}`" for d in ft["dim_params"]))
    if ft["contrib_ops"]:
        parts.append("contrib " + ", ".join(ft["contrib_ops"]))
    if ft["ml_ops"]:
        parts.append("ai.onnx.ml " + ", ".join(ft["ml_ops"]))
    if ft["control_flow"]:
        parts.append("control flow " + ", ".join(f"{k}×{v}" for k, v in ft["control_flow"].items()))
    if ft["quant_ops"]:
        parts.append("quantized " + ", ".join(ft["quant_ops"]))
    if ft["functions"]:
        parts.append(f"{ft['functions']} local functions")
    nt = [v for v in ft["inputs"] + ft["outputs"] if "type" in v]
    if nt:
        parts.append("non-tensor values " + ", ".join(f"{v['name']} ({v['type']})" for v in nt))
    return "; ".join(parts)


def human(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n < 1 << 20 else f"{n / (1 << 20):.2f} MB"


def write_table():
    entries = load_manifest()
    lines = ["| file | exporter (versions) | family | what it exercises | size |", "|---|---|---|---|---|"]
    for e in entries:
        cell = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines.append(f"| `{e['file']}` | {cell(e['exporter'])} | {e['family']} | {cell(exercises(e))} | "
                     f"{human(e['size'])} |")
    total = sum(e["size"] for e in entries)
    lines.append("")
    lines.append(f"{len(entries)} models, {human(total)} in all.")
    table = "\n".join(lines)
    start, end = "<!-- table:start -->", "<!-- table:end -->"
    text = Path(README).read_text() if os.path.exists(README) else f"# corpus\n\n{start}\n{end}\n"
    if start not in text:
        text += f"\n{start}\n{end}\n"
    a, rest = text.split(start, 1)
    _, b = rest.split(end, 1)
    with open(README, "w") as f:
        f.write(a + start + "\n" + table + "\n" + end + b)
