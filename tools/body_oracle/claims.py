"""What each side claims about the body values: graphlsp's types, read in-process, and with --peers those of onnx's
shape inference (in-process), onnx-shape-inference and onnxruntime's symbolic inference (in the oracle venv,
a subprocess of the entry script)."""

from __future__ import annotations

import json
import os
from typing import Any

import onnx

from .bodies import Body, load_model, subgraph_at, tagged_copy
from .engines import short

ENTRY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "body_shapes.py")


def graphlsp_types(model: onnx.ModelProto, path: str | None, table: dict[str, Body]) -> dict[tuple[str, str], Any]:
    """(tag, value name) -> (dtype, shape JSON) | None for every body node output graphlsp has."""
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.infer import dims as d
    from graphlsp.infer.types import TensorType, elem_name

    if path is not None and not path.endswith(".onnx"):
        with open(path, encoding="utf-8") as f:
            a: Any = Analysis(f.read())
    else:
        from graphlsp.binary.read import model_from_proto, read_model

        ir, _ = read_model(path) if path is not None else model_from_proto(model)
        a = ModelAnalysis(ir, [])
    out: dict[tuple[str, str], Any] = {}
    for tag, body in table.items():
        g = a.model.graph
        try:
            for i, attr, k in body.path:
                g = g.nodes[i].subgraphs[attr][k]
        except (IndexError, KeyError, AttributeError):
            continue
        for name in body.outputs:
            v = g.values.get(name)
            ty = a.refiner.type_of(v) if v is not None else None
            if ty is None:
                continue
            if not isinstance(ty, TensorType):
                out[(tag, name)] = ("not a tensor", None)
                continue
            shape = None if ty.shape is None else [d.to_json(x) for x in ty.shape]
            out[(tag, name)] = (elem_name(ty.elem) if ty.elem is not None else None, shape)
    return out


ORACLE_PY = os.environ.get("ORACLE_PY", os.path.join(os.environ.get("TMPDIR") or "/tmp", "gl-oracle", "venv", "bin",
                                                     "python"))  # fmt: skip
PEERS = ["onnx", "osi", "ortsym"]


def _vi_type(vi: onnx.ValueInfoProto) -> Any:
    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return ("not a tensor", None) if t.WhichOneof("value") else None
    tt = t.tensor_type
    dt = onnx.TensorProto.DataType.Name(tt.elem_type).lower() if tt.elem_type else None
    if not tt.HasField("shape"):
        return (dt, None)
    dims: list[Any] = []
    for dm in tt.shape.dim:
        dims.append(int(dm.dim_value) if dm.HasField("dim_value") else (dm.dim_param or None))
    return (dt, dims)


def proto_body_types(model: onnx.ModelProto, table: dict[str, Body]) -> dict[str, dict[str, Any]]:
    """tag -> value -> (dtype, shape) from the value_info / outputs a peer wrote into each body."""
    out: dict[str, dict[str, Any]] = {}
    for tag, body in table.items():
        try:
            g = subgraph_at(model.graph, body.path)
        except (IndexError, StopIteration):
            continue
        outs = set(body.outputs)
        out[tag] = {vi.name: t for vi in [*g.value_info, *g.output] if vi.name in outs and (t := _vi_type(vi))}
    return out


def peer_types(peer: str, model: onnx.ModelProto, table: dict[str, Body]) -> dict[str, dict[str, Any]]:
    """Run in the oracle venv for osi and ortsym (see runtime_shapes.py --peers)."""
    if peer == "onnx":
        import onnx.shape_inference

        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
        return proto_body_types(inferred, table)
    if peer == "ortsym":
        import logging

        logging.disable(logging.WARNING)
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        for auto_merge in (False, True):
            try:
                ssi = SymbolicShapeInference(2**31 - 1, auto_merge, False, 0)
                ssi._preprocess(model)
                while ssi.run_:
                    ssi._infer_impl()
                ssi._update_output_from_vi()
                return proto_body_types(ssi.out_mp_, table)
            except Exception:  # noqa: BLE001
                if auto_merge:
                    raise
        return {}
    import logging

    logging.disable(logging.WARNING)
    import onnx_ir as ir
    import onnx_shape_inference as osi

    irm = ir.from_proto(model)
    osi.infer_symbolic_shapes(irm, warn_on_missing=False)
    out: dict[str, dict[str, Any]] = {}
    for tag, body in table.items():
        g: Any = irm.graph
        try:
            for i, attr, k in body.path:
                a = list(g)[i].attributes[attr].value
                g = a[k] if isinstance(a, (list, tuple)) else a
        except (IndexError, KeyError, AttributeError):
            continue
        vals = {}
        for node in g:
            for v in node.outputs:
                if not v.name:
                    continue
                dt = v.dtype.name.lower() if v.dtype is not None else None
                shape = None if v.shape is None else [int(x) if isinstance(x, int) else x.value for x in v.shape]
                vals[v.name] = (dt, shape)
        out[tag] = vals
    return out


def run_peer(peer: str, path: str | None, model: onnx.ModelProto, table: dict[str, Body],
             timeout: float) -> tuple[dict[str, dict[str, Any]] | None, str]:  # fmt: skip
    """(types, error): onnx in this process, the others in the oracle venv (a subprocess)."""
    import subprocess
    import tempfile

    if peer == "onnx":
        try:
            return peer_types(peer, model, table), ""
        except Exception as e:  # noqa: BLE001
            return None, short(e)
    if not os.path.exists(ORACLE_PY):
        return None, f"no oracle venv at {ORACLE_PY}"
    with tempfile.TemporaryDirectory(prefix="body_peer.") as tmp:
        src = path
        if src is None or not src.endswith(".onnx"):
            src = os.path.join(tmp, "model.onnx")
            onnx.save(model, src)
        out = os.path.join(tmp, "out.json")
        try:
            r = subprocess.run([ORACLE_PY, ENTRY, "--_peer", peer, os.path.abspath(src), out],
                               capture_output=True, text=True, timeout=timeout)  # fmt: skip
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f}s"
        if not os.path.exists(out):
            return None, ((r.stderr or r.stdout).strip().splitlines() or ["died"])[-1][:160]
        with open(out) as f:
            got = json.load(f)
    if "error" in got:
        return None, got["error"]
    return {tag: {n: tuple(t) for n, t in vals.items()} for tag, vals in got["types"].items()}, ""


def peer_helper(peer: str, path: str, out: str) -> None:
    model = load_model(path)
    _, table = tagged_copy(model)
    try:
        res: dict[str, Any] = {"types": peer_types(peer, model, table)}
    except Exception as e:  # noqa: BLE001
        res = {"error": short(e)}
    with open(out, "w") as f:
        json.dump(res, f)
