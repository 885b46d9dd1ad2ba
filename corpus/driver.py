"""The command line (any python3, standard library only): each chosen target exported in a subprocess of its
group's venv (`--worker`), the files validated in the main venv (`--validate`), what passes copied into models/
and recorded in the manifest and README.md's table. Entry points: corpus/build.py and `python -m corpus`."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import HERE, MODELS
from .kit import Ctx, torchvision_shim
from .manifest import human, load_manifest, save_manifest, write_table
from .registry import Target, by_name, load_targets
from .validate import validate_dir
from .venvs import child_env, ensure_venv, venv_python

DESCRIPTION = "Build corpus/models/: real exporter-produced binary ONNX models, tiny configs, random weights."
ENTRY = os.path.join(HERE, "build.py")  # what the subprocesses run, in the venv of their group
TARGET_TIMEOUT = 900


def run_target(t: Target, work: str, timeout: int) -> tuple[list[dict], str | None]:
    """Export in the group's venv, validate in the main venv. Returns (kept entries, failure reason)."""
    stage = os.path.join(work, t.name)
    os.makedirs(stage)
    log = os.path.join(work, t.name + ".log")
    cmd = [venv_python(t.group), ENTRY, "--worker", t.name, "--stage", stage]
    try:
        with open(log, "w") as lf:
            rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=child_env(), timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return [], f"export timed out after {timeout} s (log {log})"
    info_path = os.path.join(stage, "_info.json")
    info = json.loads(Path(info_path).read_text()) if os.path.exists(info_path) else {"files": {}}
    if rc != 0 and not info["files"]:
        lines = [ln for ln in Path(log).read_text(errors="replace").splitlines() if ln.strip()]
        err = next((ln for ln in reversed(lines) if re.match(r"^[A-Za-z_.]+(Error|Exception)\b", ln)),
                   lines[-1] if lines else "")
        return [], f"export failed: {err[:400]} (log {log})"
    vcmd = [venv_python("main"), ENTRY, "--validate", stage]
    vr = subprocess.run(vcmd, capture_output=True, text=True, env=child_env(), timeout=timeout)
    vpath = os.path.join(stage, "_validate.json")
    if vr.returncode != 0 or not os.path.exists(vpath):
        return [], f"validation crashed: {(vr.stderr or vr.stdout)[-400:]}"
    results = json.loads(Path(vpath).read_text())
    kept, problems = [], []
    if info.get("error"):
        problems.append("export partly failed: " + info["error"])
    for f, r in results.items():
        if not r["ok"]:
            problems.append(f"{f} dropped: {r['reason'][:400]}")
            continue
        dst = os.path.join(MODELS, f)
        shutil.copyfile(os.path.join(stage, f), dst)
        data = info["files"].get(f, {}).get("data")
        if data:  # the model's external data file, kept beside it under its own name
            shutil.copyfile(os.path.join(stage, data), os.path.join(MODELS, data))
        with open(dst, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        meta = info["files"].get(f, {})
        kept.append({"file": f, "target": t.name, "family": t.family, "exporter": info.get("exporter", t.exporter),
                     "note": meta.get("note", ""), "size": r["size"], "sha256": sha, "smoke_run": r["smoke_run"],
                     "full_check": r.get("full_check", False),
                     **({"fused": meta["fused"]} if meta.get("fused") else {}),
                     **({"external_data_file": meta["data"]} if meta.get("data") else {}), "features": r["features"]})
    return kept, ("; ".join(problems) or None)


def main(argv=None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    ap.add_argument("--list", action="store_true", help="print the targets and exit")
    ap.add_argument("--only", help="comma-separated target names (default: all)")
    ap.add_argument("--skip", help="comma-separated target names to leave out")
    ap.add_argument("--skip-install", action="store_true", help="use the venvs as they are")
    ap.add_argument("--timeout", type=int, default=TARGET_TIMEOUT, help="seconds per target")
    ap.add_argument("--keep-work", action="store_true", help="keep the staging folder and logs")
    ap.add_argument("--table", action="store_true", help="only rewrite README.md's table from the manifest")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--validate", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    targets = load_targets()
    if a.worker:
        return worker(a.worker, a.stage)
    if a.validate:
        res = validate_dir(a.validate)
        with open(os.path.join(a.validate, "_validate.json"), "w") as f:
            json.dump(res, f, indent=1)
        return 0
    if a.list:
        for t in targets:
            print(f"{t.name:28} {t.group:7} {t.family:22} {t.exporter:36} {t.note}")
        return 0
    if a.table:
        write_table()
        return 0

    names = by_name()
    chosen = targets
    if a.only:
        want = [n.strip() for n in a.only.split(",") if n.strip()]
        bad = [n for n in want if n not in names]
        if bad:
            print(f"unknown targets: {', '.join(bad)} (see --list)", file=sys.stderr)
            return 2
        chosen = [names[n] for n in want]
    if a.skip:
        drop = {n.strip() for n in a.skip.split(",")}
        chosen = [t for t in chosen if t.name not in drop]

    t_start = time.time()
    groups = []
    for t in chosen:
        if t.group not in groups:
            groups.append(t.group)
    if "main" not in groups:
        groups.insert(0, "main")  # validation runs there
    group_err = {g: ensure_venv(g, a.skip_install) for g in groups}
    for g, err in group_err.items():
        if err:
            print(f"[venv] {g}: SKIPPED: {err}", flush=True)
    if group_err["main"]:
        print("the main venv is not usable; nothing can be built", file=sys.stderr)
        return 1
    t_venv = time.time() - t_start

    os.makedirs(MODELS, exist_ok=True)
    manifest = [] if not a.only and not a.skip else load_manifest()
    if not a.only and not a.skip:
        for f in os.listdir(MODELS):
            if f.endswith((".onnx", ".onnx.data", ".onnx_data")):
                os.remove(os.path.join(MODELS, f))
    work = tempfile.mkdtemp(prefix="gl-corpus-work-")
    failures = []
    for t in chosen:
        if group_err.get(t.group):
            failures.append((t.name, f"{t.group} venv unavailable: {group_err[t.group]}"))
            print(f"[skip] {t.name}: {t.group} venv unavailable", flush=True)
            continue
        t0 = time.time()
        for e in [e for e in manifest if e["target"] == t.name]:
            p = os.path.join(MODELS, e["file"])
            if os.path.exists(p):
                os.remove(p)
            manifest.remove(e)
        kept, problem = run_target(t, work, a.timeout)
        manifest.extend(kept)
        save_manifest(manifest)
        files = ", ".join(f"{e['file']} ({human(e['size'])})" for e in kept) or "nothing"
        print(f"[{'ok' if kept and not problem else 'FAIL' if not kept else 'part'}] {t.name} "
              f"({time.time() - t0:.0f} s): {files}", flush=True)
        if problem:
            print(f"       {problem}", flush=True)
            failures.append((t.name, problem))
    save_manifest(manifest)
    write_table()
    if not a.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work folder: {work}")
    total = sum(e["size"] for e in manifest)
    print(f"\n{len(manifest)} models, {human(total)} in {MODELS}; venvs {t_venv:.0f} s, "
          f"total {time.time() - t_start:.0f} s")
    if failures:
        print("skipped / failed:")
        for n, why in failures:
            print(f"  {n}: {why}")
    return 0


_SHIM = None


def worker(name: str, stage: str) -> int:
    t = by_name()[name]
    if t.group == "main":
        global _SHIM
        _SHIM = torchvision_shim()  # keep the Library alive: its ops go away with it
    ctx = Ctx(stage)
    rc = 0
    try:
        t.fn(ctx)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        ctx.info["error"] = traceback.format_exc().strip().splitlines()[-1][:400]
        rc = 1
    with open(os.path.join(stage, "_info.json"), "w") as f:
        json.dump(ctx.info, f, indent=1)
    shutil.rmtree(ctx.tmp, ignore_errors=True)
    return rc
