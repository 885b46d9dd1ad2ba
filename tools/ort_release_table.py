"""Make graphlsp/runtime/tables/onnxruntime-releases.json: for each onnxruntime release (major.minor), the newest
IR version and opset of each domain it loads (what `runtime-too-old` checks a target like `onnxruntime@1.16:cpu`
against).

Two sources, the measured one preferred:

- the releases whose wheel pip can install here (1.15 and later for this Python): each wheel installed into a
  throw-away folder and asked which Identity models it loads (graphlsp.runtime.installed.probe_limits, the same
  probe as for the installed onnxruntime); `--python` names an interpreter with numpy<2 and onnx, which the
  older wheels need;
- the older ones: onnxruntime's own table, "ONNX Runtime compatibility" (onnxruntime.ai/docs/reference/
  compatibility.html; microsoft/onnxruntime, branch gh-pages, docs/reference/compatibility.md at commit
  109c0baa9367a6818c00eb42d160ae3719ffb609), copied below. Its rows for 1.15 to 1.20 are checked against the
  wheels (the script prints where they differ): they agree except that 1.15 loads IR version 9 (the table: 8)
  and 1.18 to 1.20 load ai.onnx.ml opset 5 (the table: 4). Where a wheel was measured, its figures stand.

    python tools/ort_release_table.py --python /path/to/venv-with-numpy1/bin/python [--wheels DIR] [--check]

`--check` also loads every model of corpus/models and ../shared/realworld with each wheel and compares the
outcome with graphlsp's runtime-too-old for `onnxruntime@<release>:cpu`. Measured with the wheels of 1.16 to
1.31 on the 65 models (1,040 pairs): the 46 pairs flagged are each refused by that wheel for the model's IR
version or opset, none of the others is; 18 pairs fail to load for other reasons (kernels) and are not flagged.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "graphlsp" / "runtime" / "tables" / "onnxruntime-releases.json"
DOC = ("onnxruntime's compatibility table (microsoft/onnxruntime, gh-pages, docs/reference/compatibility.md, "
       "commit 109c0baa9367a6818c00eb42d160ae3719ffb609)")  # fmt: skip

# | ONNX Runtime version | ONNX version | ONNX opset version | ONNX ML opset version | ONNX IR version |
DOC_ROWS = """
| 1.20 | **1.16.1** | 21 | 4 | 10 |
| 1.19 | **1.16.1** | 21 | 4 | 10 |
| 1.18 | **1.16** | 21 | 4 | 10 |
| 1.17 | **1.15** | 20 | 4 | 9 |
| 1.16 | **1.14.1** | 19 | 3 | 9 |
| 1.15 | **1.14** | 19 | 3 | 8 |
| 1.14 | **1.13** | 18 | 3 | 8 |
| 1.13 | **1.12** | 17 | 3 | 8 |
| 1.12 | **1.12** | 17 | 3 | 8 |
| 1.11 | **1.11** | 16 | 2 | 8 |
| 1.10 | **1.10** | 15 | 2 | 8 |
| 1.9 | **1.10** | 15 | 2 | 8 |
| 1.8 | **1.9** | 14 | 2 | 7 |
| 1.7 | **1.8** | 13 | 2 | 7 |
| 1.6 | **1.8** | 13 | 2 | 7 |
| 1.5 | **1.7** | 12 | 2 | 7 |
| 1.4 | **1.7** | 12 | 2 | 7 |
| 1.3 | **1.7** | 12 | 2 | 7 |
| 1.2<br/>1.1 | **1.6** | 11 | 2 | 6 |
| 1.0 | **1.6** | 11 | 2 | 6 |
| 0.5 | **1.5** | 10 | 1 | 5 |
| 0.4 | **1.5** | 10 | 1 | 5 |
| 0.3 | **1.4** | 9 | 1 | 3 |
| 0.2 | **1.3** | 8 | 1 | 3 |
| 0.1 | **1.3** | 8 | 1 | 3 |
"""

# the newest patch release of each minor release that has a wheel for CPython 3.11 on Linux x86-64
WHEELS = ["1.15.1", "1.16.3", "1.17.3", "1.18.1", "1.19.2", "1.20.1", "1.21.1", "1.22.1", "1.23.2", "1.24.4",
          "1.25.1", "1.26.0", "1.27.0", "1.28.0", "1.29.0", "1.30.0", "1.31.1"]  # fmt: skip

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import onnxruntime
from graphlsp.runtime.installed import probe_limits
print(json.dumps({"version": onnxruntime.__version__, **probe_limits(["", "ai.onnx.ml", "com.microsoft"])}))
"""


def doc_rows() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in DOC_ROWS.strip().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        for release in cells[0].split("<br/>"):
            out[release.strip()] = {"ir_version": int(cells[4]),
                                    "opsets": {"ai.onnx": int(cells[2]), "ai.onnx.ml": int(cells[3])},
                                    "from": DOC}  # fmt: skip
    return out


def probe_wheel(version: str, python: str, wheels: Path) -> dict[str, Any]:
    """The limits of one release, measured by loading models with its wheel."""
    found = sorted(wheels.glob(f"onnxruntime-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
                        f"onnxruntime=={version}"], check=True)  # fmt: skip
        found = sorted(wheels.glob(f"onnxruntime-{version}-*.whl"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", tmp, str(found[0])],
                       check=True)  # fmt: skip
        got = subprocess.run([python, "-c", PROBE, str(ROOT)], env={"PYTHONPATH": tmp}, capture_output=True,
                             text=True, check=True)  # fmt: skip
    data: dict[str, Any] = json.loads(got.stdout.strip().splitlines()[-1])
    return data


LOAD = """
import sys, onnxruntime as ort
opts = ort.SessionOptions()
opts.log_severity_level = 4
for path in sys.argv[1:]:
    try:
        ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        print("ok")
    except Exception as e:
        text = str(e)
        versions = "Unsupported model IR version" in text or "official support for domain" in text
        print("version" if versions else "other")
"""


def check_models(version: str, python: str, wheels: Path) -> tuple[int, int, list[str]]:
    """(agreeing, other load errors, disagreements) of runtime-too-old with the release's wheel on the models."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.lint.deployment import deployment_findings

    release = ".".join(version.split(".")[:2])
    models = [ROOT / "corpus" / "models", ROOT.parent / "shared" / "realworld"]
    paths = sorted(p for folder in models for p in folder.glob("*.onnx"))
    with tempfile.TemporaryDirectory() as tmp:
        found = sorted(wheels.glob(f"onnxruntime-{version}-*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", tmp, str(found[0])],
                       check=True)  # fmt: skip
        out = subprocess.run([python, "-c", LOAD, *map(str, paths)], env={"PYTHONPATH": tmp}, capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    agree, other, wrong = 0, 0, []
    for path, result in zip(paths, out, strict=True):
        model, findings = read_model(path)
        analysis = ModelAnalysis(model, findings)
        flagged = any(f.code == "GL703" for f in deployment_findings(model, analysis.refiner,
                                                                     [f"onnxruntime@{release}:cpu"]))  # fmt: skip
        if result == "other" and not flagged:
            other += 1
        elif flagged == (result == "version"):
            agree += 1
        else:
            wrong.append(f"{release} {path.name}: {result}, flagged {flagged}")
    return agree, other, wrong


def key(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in release.split("."))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="an interpreter with numpy<2 and onnx installed")
    ap.add_argument("--wheels", default=None, help="a folder for the downloaded wheels (kept between runs)")
    ap.add_argument("--check", action="store_true", help="compare runtime-too-old with each wheel on the models")
    args = ap.parse_args()
    releases = doc_rows()
    wheels = Path(args.wheels) if args.wheels else Path(tempfile.mkdtemp())
    wheels.mkdir(parents=True, exist_ok=True)
    measured = list(WHEELS)
    try:
        import onnxruntime

        measured.append(onnxruntime.__version__)  # the installed one: the current release
    except ImportError:
        pass
    for version in measured:
        got = probe_wheel(version, args.python, wheels)
        release = ".".join(version.split(".")[:2])
        doc = releases.get(release)
        row = {"ir_version": got["ir_version"], "opsets": got["opsets"],
               "from": f"the onnxruntime {got['version']} wheel, loading models"}  # fmt: skip
        if doc is not None:
            for name, value in [("IR", doc["ir_version"]), *doc["opsets"].items()]:
                have = got["ir_version"] if name == "IR" else got["opsets"].get(name)
                if have != value:
                    print(f"{release}: the table says {name} {value}, the wheel loads {have}")
        releases[release] = row
        print(f"{release}: IR {row['ir_version']}, {row['opsets']}")
    body = {"format": 1, "releases": {r: releases[r] for r in sorted(releases, key=key)}}
    OUT.write_text(json.dumps(body, indent=1, sort_keys=False) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(releases)} releases")
    if args.check:
        from graphlsp.runtime.kernels import releases as shipped

        shipped.cache_clear()
        for version in WHEELS[1:]:  # 1.15's wheel reads models with an onnx too old for some of them
            agree, other, wrong = check_models(version, args.python, wheels)
            print(f"{version}: {agree} agree, {other} fail for other reasons, {len(wrong)} disagree", *wrong)
    return 0


if __name__ == "__main__":
    sys.exit(main())
