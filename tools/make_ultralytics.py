"""Write the ultralytics exports graphlsp is tested and benchmarked on: YOLOv8n, YOLO11n and YOLO11n-seg built
from the package's own model configs with random weights (seeded; nothing downloaded), exported as a user does
(`format="onnx", dynamic=True, simplify=True`: onnxslim writes `value_info` with symbolic expressions for every
intermediate value), at a reduced width (1/16 of the channels instead of the `n` scale's 1/4) so the files stay
small; the graph, its ops and its dims are those of the `n` model.

Run it in a venv with `ultralytics` and `onnxslim` (not graphlsp's: they are fixture makers only), without a
network (`unshare -n` shows that nothing is fetched):

    python tools/make_ultralytics.py corpus/ultralytics
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

MODELS = {  # output file: (config in ultralytics/cfg/models, export options)
    "yolov8n.onnx": ("v8/yolov8.yaml", {}),
    "yolo11n.onnx": ("11/yolo11.yaml", {}),
    "yolo11n-seg.onnx": ("11/yolo11-seg.yaml", {}),
}
WIDTH = 0.0625


def main(out: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="gl-yolo-"))
    os.environ.setdefault("YOLO_CONFIG_DIR", str(tmp / "config"))
    os.environ["YOLO_OFFLINE"] = "1"
    import torch
    import ultralytics
    import yaml
    from ultralytics import YOLO

    cfgs = Path(ultralytics.__file__).parent / "cfg" / "models"
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(tmp)  # the exporter writes beside the working directory
    for name, (cfg, options) in MODELS.items():
        torch.manual_seed(0)
        spec = yaml.safe_load((cfgs / cfg).read_text())
        spec["scales"] = {"n": [spec["scales"]["n"][0], WIDTH, spec["scales"]["n"][2]]}
        stem = name.removesuffix(".onnx")
        path = tmp / f"{stem}.yaml"  # the scale letter is read from the file name
        path.write_text(yaml.safe_dump(spec))
        model = YOLO(str(path))
        exported = model.export(format="onnx", dynamic=True, simplify=True, imgsz=320, device="cpu", **options)
        shutil.copyfile(exported, out / name)
        print(name, (out / name).stat().st_size)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "corpus/ultralytics"))
