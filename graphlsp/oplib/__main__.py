"""`python -m graphlsp.oplib`: check op libraries, list what they declare, write a declaration to start from.

    python -m graphlsp.oplib check ops/*.onnxop          # every problem as FILE:LINE:COL: severity: message
    python -m graphlsp.oplib list [--domain com.microsoft]  # the ops of the shipped libraries (and FILES)
    python -m graphlsp.oplib skeleton --onnxruntime com.microsoft.MatMulNBits
                                                        # a declaration from onnxruntime's registered schema
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from graphlsp.oplib.catalog import CATALOG, builtin_paths
from graphlsp.oplib.checker import check_library
from graphlsp.oplib.parser import parse_file

_ATTR = {1: "float", 2: "int", 3: "string", 4: "tensor", 5: "graph", 6: "floats", 7: "ints", 8: "strings",
         9: "tensors", 10: "graphs", 11: "sparse_tensor", 12: "sparse_tensors", 13: "type_proto",
         14: "type_protos"}  # fmt: skip


def _short(doc: str, limit: int = 110) -> str:
    """The first sentence of a schema's description, on one line."""
    text = " ".join(doc.replace("`", "").split())
    for stop in (". ", ".\n"):
        cut = text.find(stop)
        if 0 < cut < limit:
            return text[: cut + 1]
    return text if len(text) <= limit else text[: limit - 3].rsplit(" ", 1)[0] + "..."


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _type(t: str) -> str:
    return t[7:-1] if t.startswith("tensor(") and t.endswith(")") else t


def _value(v: Any) -> str:
    if isinstance(v, bytes):
        v = v.decode("utf-8", errors="replace")
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, float):
        import numpy as np

        text = str(np.float32(v))  # the shortest text that reads back as the same float32
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def skeleton(schema: Any, domain_in_header: bool = True) -> str:
    """A declaration from a schema object (onnxruntime's or onnx's OpSchema): signature and docs; the shapes are
    left for the author."""
    import onnx

    out = []
    name = f"{schema.domain}.{schema.name}" if domain_in_header and schema.domain else schema.name
    out.append(f"op {name} since {schema.since_version} {{")
    doc = _short(getattr(schema, "doc", "") or "")
    if doc:
        out.append(f"  doc {_quote(doc)}")
    for kind, params in (("input ", schema.inputs), ("output", schema.outputs)):
        for p in params:
            option = int(p.option)
            mark = "?" if option == 1 else "..." if option == 2 else ""
            type_str = str(getattr(p, "typeStr", None) or getattr(p, "type_str", ""))
            homogeneous = getattr(p, "isHomogeneous", getattr(p, "is_homogeneous", True))
            hetero = " heterogeneous" if option == 2 and not homogeneous else ""
            out.append(f"  {kind} {p.name}{mark}: {_type(type_str)}{hetero}")
    for a in schema.attributes.values():
        raw = getattr(a, "_default_value", None)
        default = None
        if isinstance(raw, bytes) and raw:
            proto = onnx.AttributeProto.FromString(raw)
            if proto.type:
                default = onnx.helper.get_attribute_value(proto)
        elif raw is None and getattr(a, "default_value", None) is not None and a.default_value.type:
            default = onnx.helper.get_attribute_value(a.default_value)
        kind = _ATTR.get(int(a.type), "?")
        text = f"  attr   {a.name}{'' if a.required or default is not None else '?'}: {kind}"
        if default is not None:
            text += f" = {_value(default)}"
        adoc = _short(a.description or "", 90)
        if adoc:
            text += f" {_quote(adoc)}"
        out.append(text)
    for c in schema.type_constraints:
        out.append(f"  type   {c.type_param_str}: {', '.join(_type(t) for t in c.allowed_type_strs)}")
    out.append("}")
    return "\n".join(out)


def _onnxruntime_schemas() -> list[Any]:
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort
    except ImportError:
        sys.exit("onnxruntime is not installed: `pip install onnxruntime`")
    return list(ort.get_all_operator_schema())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m graphlsp.oplib", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="check library files")
    c.add_argument("files", nargs="*", help="library files (default: the shipped libraries)")
    ls = sub.add_parser("list", help="list the declared ops")
    ls.add_argument("files", nargs="*")
    ls.add_argument("--domain")
    sk = sub.add_parser("skeleton", help="a declaration to start from, from a runtime's registered schema")
    sk.add_argument("ops", nargs="+", help="DOMAIN.OP (e.g. com.microsoft.MatMulNBits), or DOMAIN.* for all")
    sk.add_argument("--onnxruntime", action="store_true", help="read onnxruntime's registry (the default)")
    args = ap.parse_args(argv)
    if args.cmd == "check":
        files = [Path(f) for f in args.files] or builtin_paths()
        errors = 0
        for f in files:
            lib = check_library(parse_file(f))
            for p in lib.problems:
                print(p)
            errors += len(lib.errors)
            print(f"{f}: {len(lib.ops)} ops, {len(lib.errors)} errors", file=sys.stderr)
        return 1 if errors else 0
    if args.cmd == "list":
        if args.files:
            CATALOG.add_files([Path(f) for f in args.files])
        for lib in CATALOG.libraries():
            for op in lib.ops:
                if args.domain is None or op.domain == args.domain:
                    until = f" until {op.until}" if op.until is not None else ""
                    shape = "shape" if op.shape or any(p.patterns or p.same for p in op.outputs) else "-"
                    print(f"{lib.name:14} {op.qualified:50} since {op.since}{until:10} {shape}")
        return 0
    schemas = _onnxruntime_schemas()
    for want in args.ops:
        dom, _, name = want.rpartition(".")
        dom = "" if dom == "ai.onnx" else dom
        found = [s for s in schemas if s.domain == dom and (name == "*" or s.name == name)]
        if not found:
            print(f"# {want}: not in onnxruntime's registry", file=sys.stderr)
        for s in sorted(found, key=lambda s: (s.name, s.since_version)):
            print(skeleton(s))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
