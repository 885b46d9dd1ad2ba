"""Make the kernel tables shipped in graphlsp/runtime/tables/ (used when onnxruntime is not installed, or does
not register the target's provider):

- onnxruntime-cpu.json: the CPU kernels registered in the installed onnxruntime wheel (its registry, read with
  onnxruntime.capi._pybind_state.get_all_opkernel_def);
- onnxruntime-cuda.json, onnxruntime-dml.json: from onnxruntime's docs/OperatorKernels.md (a path given on the
  command line: the file is not kept here). The doc merges each version range's kernels into one row: the types
  of each type string are the union over its kernels;
- onnxruntime.json: the schemas onnxruntime resolves kernel type strings with (trimmed to the type strings some
  kernel uses), and the newest IR version and opsets the installed release loads.

    .venv/bin/python tools/ort_kernel_tables.py [--kernels-doc path/to/OperatorKernels.md]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from graphlsp.runtime.installed import merge_kernels, read_installed, short_type
from graphlsp.runtime.kernels import FORMAT, TABLES

DOC_PROVIDERS = {"CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml"}


def parse_kernels_doc(text: str) -> dict[str, dict[str, dict[str, list[list[Any]]]]]:
    """OperatorKernels.md: provider -> domain -> op -> [[start, end or None, {type string: [types]}]]."""
    out: dict[str, dict[str, dict[str, list[tuple[int, int | None, dict[str, list[str]]]]]]] = {}
    provider = domain = op = None
    for line in text.splitlines():
        m = re.match(r"## Operators implemented by (\w+)", line)
        if m:
            provider = DOC_PROVIDERS.get(m.group(1))
            continue
        m = re.match(r"\|\*\*Operator Domain:\*\* \*([\w.]+)\*", line)
        if m:
            domain = "" if m.group(1) == "ai.onnx" else m.group(1)
            continue
        if provider is None or domain is None or not line.startswith("|") or line.startswith("|--"):
            continue
        cells = line.split("|")[1:-1]
        if len(cells) != 4 or cells[0] == "Op Name" or not re.match(r"\[?\d", cells[2].strip()):
            continue
        if cells[0]:
            op = cells[0]
        if op is None:
            continue
        versions = cells[2].strip()
        if versions.endswith("+"):
            start, end = int(versions[:-1]), None
        elif versions.startswith("["):
            a, b = versions.strip("[]").split(",")
            start, end = int(a), int(b)
        else:
            start = end = int(versions)
        cons: dict[str, list[str]] = {}
        for part in cells[3].split("<br/>"):
            m = re.match(r"\s*\*\*(\w+)\*\* = (.*)", part)
            if m:
                cons[m.group(1)] = [short_type(t) for t in split_types(m.group(2))]
        out.setdefault(provider, {}).setdefault(domain, {}).setdefault(op, []).append((start, end, cons))
    return {p: {d: {o: merge_kernels(e) for o, e in sorted(ops.items())} for d, ops in sorted(ds.items())}
            for p, ds in out.items()}  # fmt: skip


def split_types(text: str) -> list[str]:
    """`tensor(float), map(int64, tensor(float))` -> ["tensor(float)", "map(int64,tensor(float))"] (spelled as
    onnxruntime's registry spells them: no space inside)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    out.append(cur.strip())
    return [t.replace(" ", "") for t in out if t]


def trim_schemas(schemas: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """Only the type strings some kernel of the op uses, for ops some table has."""
    used: dict[tuple[str, str], set[str]] = {}
    for kernels in tables:
        for domain, ops in kernels.items():
            for op, entries in ops.items():
                used.setdefault((domain, op), set()).update(k for e in entries for k in e[2])
    out: dict[str, Any] = {}
    for domain, ops in schemas.items():
        for op, versions in ops.items():
            names = used.get((domain, op))
            if names is None:
                out.setdefault(domain, {}).setdefault(op, {v: {} for v in versions})  # the op exists: keep versions
                continue
            out.setdefault(domain, {})[op] = {v: {k: a for k, a in args.items() if k in names}
                                              for v, args in versions.items()}  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels-doc", help="onnxruntime's docs/OperatorKernels.md (for the CUDA and DML tables)")
    ap.add_argument("--doc-version", default="", help="the onnxruntime version the doc describes")
    ap.add_argument("--doc-source", default="onnxruntime's docs/OperatorKernels.md",
                    help="where the doc comes from (repository, commit), recorded in the tables")
    args = ap.parse_args()
    installed = read_installed()
    if installed is None:
        sys.exit("onnxruntime is not installed")
    version = installed["version"]
    cpu = installed["providers"]["cpu"]
    tables = {"cpu": (cpu, f"onnxruntime {version} wheel's registry (CPUExecutionProvider)", version)}
    if args.kernels_doc:
        doc = parse_kernels_doc(Path(args.kernels_doc).read_text(encoding="utf-8"))
        for provider, kernels in doc.items():
            dv = args.doc_version or version
            tables[provider] = (kernels, f"{args.doc_source} ({dv})", dv)
    TABLES.mkdir(exist_ok=True)
    common = {"format": FORMAT, "runtime": "onnxruntime", "version": version, "limits": installed["limits"],
              "schemas": trim_schemas(installed["schemas"], [t[0] for t in tables.values()])}  # fmt: skip
    (TABLES / "onnxruntime.json").write_text(json.dumps(common, separators=(",", ":"), sort_keys=True) + "\n")
    for provider, (kernels, source, v) in tables.items():
        body = {"format": FORMAT, "version": v, "source": source, "kernels": kernels}
        (TABLES / f"onnxruntime-{provider}.json").write_text(json.dumps(body, separators=(",", ":"),
                                                                         sort_keys=True) + "\n")  # fmt: skip
        count = sum(len(e) for ops in kernels.values() for e in ops.values())
        print(f"onnxruntime-{provider}.json: {count} kernels, {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
