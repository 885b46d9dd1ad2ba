"""The cost formulas judged against execution: every node's formula at concrete sizes equals the count from the
shapes onnxruntime produces at those sizes.

    .venv/bin/python tools/cost_oracle.py [--sizes 3] [--json OUT] [MODEL...]

Without MODEL: every model of corpus/models, corpus/sizes and ../shared/realworld. For each model:

1. graphlsp analyses the model with no size bound and computes its cost (`graphlsp.cost`): a formula per node
   of the main graph, the peak of live activations, the parameters.
2. onnxruntime runs it (CPU, no graph optimization, every node output of the main graph made a graph output) at up
   to `--sizes` assignments of the input symbols, fed as ../shared/tools/runtime_shapes.py feeds them (its
   candidates, small to large; a run whose Conv or pooling window is larger than its padded input is skipped).
3. Per node and run: the same cost rule applied to the concrete shapes (and the elements of small int values) the
   run produced gives the count; the formula evaluated at the run's sizes must equal it. FLOPs, MACs, bytes read
   and written are judged. A node with a body (If, Loop, Scan, a function) is not judged here (its body's
   values are not outputs of the run); a formula that is unknown, or uses a symbol that is not an input dim
   (data-dependent sizes), is counted apart and never judged equal.
4. The peak: the node order replayed over the run's concrete sizes (the same liveness rule, the same values)
   against the peak formula at the run's sizes. Parameters: graphlsp's initializer bytes against the bytes onnx
   stores (raw data length, or the external data's length).

Exit 1 when any judged count differs. Run it with the Python of the repository's venv (graphlsp, onnx,
onnxruntime).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.parser

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")


def runtime_shapes() -> ModuleType:
    """../shared/tools/runtime_shapes.py, for its feeds and size candidates."""
    path = SHARED / "tools" / "runtime_shapes.py"
    spec = importlib.util.spec_from_file_location("runtime_shapes", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("runtime_shapes", mod)
    spec.loader.exec_module(mod)
    return mod


def default_models() -> list[Path]:
    out = []
    for folder in (ROOT / "corpus" / "models", ROOT / "corpus" / "sizes", SHARED / "realworld"):
        out += sorted(p for p in folder.glob("*.onnx*") if p.suffix in (".onnx", ".onnxtxt"))
    return out


# ---------------------------------------------------------------- runs
def runs(path: Path, count: int) -> tuple[list[dict[str, Any]], str]:
    """Up to `count` runs: {"env": sizes, "values": name -> (shape, elem, small int elements)}; and why none."""
    import onnxruntime as ort

    rs = runtime_shapes()
    ort.set_default_logger_severity(4)
    model = rs.load_model(str(path))
    inputs, symbols = rs._input_symbols(model)
    names = rs.main_outputs(model)
    m2 = onnx.ModelProto()
    m2.CopyFrom(model)
    have = {o.name for o in m2.graph.output}
    for n in names:
        if n not in have:
            m2.graph.output.append(onnx.ValueInfoProto(name=n))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    try:
        sess = ort.InferenceSession(m2.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return [], f"onnxruntime cannot load it: {str(e)[:200]}"
    out_names = [o.name for o in sess.get_outputs()]
    init_dims = {t.name: list(t.dims) for t in model.graph.initializer}
    found: list[dict[str, Any]] = []
    errors: list[str] = []
    seen: set[tuple[tuple[str, int], ...]] = set()
    has_int = any(np.issubdtype(onnx.helper.tensor_dtype_to_np_dtype(e), np.integer) for _, e, _ in inputs)
    tries = [(cand, merge, variant) for variant in ((0, 1, 2) if has_int else (0,)) for merge in (False, True)
             for cand in rs.CANDIDATES]  # runtime_shapes.py's order of tries  # fmt: skip
    for cand, merge, variant in tries:
        env = rs._assignment(symbols, cand, merge)
        if env is None:
            continue
        key = tuple(sorted(env.items()))
        if key in seen or len(found) >= count:
            continue
        seen.add(key)
        if _elements(inputs, env) > MAX_FEED:
            continue
        rng = np.random.default_rng(1234 + len(found))
        try:
            feeds = rs._feeds(model, inputs, env, rng, variant)
            vals = sess.run(out_names, feeds)
        except Exception as e:  # noqa: BLE001
            errors.append(str(e)[:200])
            continue
        values: dict[str, tuple[list[int], int | None, tuple[int, ...] | None]] = {}
        for name, arr in [*feeds.items(), *zip(out_names, vals, strict=True)]:
            if isinstance(arr, np.ndarray):
                values[name] = _described(arr)
        shapes = {n: {"shape": v[0]} for n, v in values.items()}
        if rs._degenerate(model, shapes, feeds, init_dims):
            continue
        found.append({"env": env, "values": values})
        if not symbols:
            break
    return found, ("" if found else f"not runnable: {errors[0] if errors else 'no assignment'}")


MAX_FEED = 1 << 24  # input elements of one run at most: the large candidates of 3-4 symbols are gigabytes


def _elements(inputs: list[Any], env: dict[str, int]) -> int:
    total = 0
    for _, _, dims in inputs:
        n = 1
        for x in dims:
            n *= x if isinstance(x, int) else env.get(x[1], 1) if x[0] == "sym" else 1
        total += n
    return total


def _described(arr: np.ndarray) -> tuple[list[int], int | None, tuple[int, ...] | None]:
    try:
        elem = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
    except Exception:  # noqa: BLE001
        elem = onnx.TensorProto.STRING if arr.dtype == object else None
    small = None
    if np.issubdtype(arr.dtype, np.integer) and arr.size <= 16:
        small = tuple(int(x) for x in arr.reshape(-1))
    return [int(x) for x in arr.shape], elem, small


# ---------------------------------------------------------------- judging
def judge(path: Path, sizes: int = 3) -> dict[str, Any]:
    """Every node's counts and the peak at each run; the parameters. `bad` lists every difference."""
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.cost import registry
    from graphlsp.cost.formula import bytes_of, evaluate
    from graphlsp.cost.memory import activations, replay
    from graphlsp.cost.model import model_cost

    if path.suffix == ".onnx":
        model, _ = read_model(str(path))
        refiner = ModelAnalysis(model, []).refiner
    else:
        a = Analysis(path.read_text(encoding="utf-8"))
        model, refiner = a.model, a.refiner
    cost = model_cost(model, refiner)
    res: dict[str, Any] = {"model": str(path), "nodes": len(cost.nodes), "judged": 0, "equal": 0, "unknown": 0,
                           "unbound": 0, "bodies": 0, "concrete_unknown": 0, "peak": [], "bad": []}  # fmt: skip
    res["params"] = _params_check(path, cost)
    if res["params"]["graphlsp"] != res["params"]["onnx"]:
        res["bad"].append(f"parameters: graphlsp {res['params']['graphlsp']} bytes, onnx {res['params']['onnx']}")
    found, why = runs(path, sizes)
    res["runs"] = [r["env"] for r in found]
    if not found:
        res["error"] = why
        return res
    graph = model.graph
    assert graph is not None
    inits = {v.name: v.tensor for v in graph.initializers.values() if v.tensor is not None}

    def concrete(name: str, run: dict[str, Any]) -> tuple[list[int], int | None, tuple[int, ...] | None] | None:
        got = run["values"].get(name)
        if got is not None:
            return got  # type: ignore[no-any-return]
        t = inits.get(name)
        if t is None:
            return None
        small = None
        if t.size <= 16 and t.dtype in (6, 7) and not t.external:
            small = tuple(int(x) for x in t.numpy().reshape(-1))
        return list(t.shape), t.dtype, small

    for run in found:
        env = run["env"]
        for n in cost.nodes:
            node = n.node
            if node.function is not None or node.subgraphs or n.body:
                res["bodies"] += 1
                continue
            rule = registry.lookup(node.domain, node.op_type)
            if rule is None:
                continue
            ins = [concrete(v.name, run) if v is not None else None for v in node.inputs]
            outs = [concrete(v.name, run) if v is not None else None for v in node.outputs]
            ctx = refiner.contexts.get(node)
            call = registry.Call(node.op_type, node.domain,
                                 [tuple(x[0]) if x is not None else None for x in ins],
                                 [tuple(x[0]) if x is not None else None for x in outs],
                                 [x[1] if x is not None else None for x in ins],
                                 ctx.attrs if ctx is not None else {}, [v is not None for v in node.inputs],
                                 [x[2] if x is not None else None for x in ins])  # fmt: skip
            truth = rule(call)
            read_truth = _sum_bytes(ins, bytes_of)
            written_truth = _sum_bytes(outs, bytes_of)
            for what, formula, want in (("flops", n.flops, truth.flops), ("macs", n.macs, truth.macs),
                                        ("bytes read", n.read, read_truth),
                                        ("bytes written", n.written, written_truth)):  # fmt: skip
                if formula is None:
                    res["unknown"] += what == "flops"
                    continue
                got = evaluate(formula, env)
                if got is None:
                    res["unbound"] += what == "flops"
                    continue
                if want is None:
                    res["concrete_unknown"] += what == "flops"
                    continue
                res["judged"] += 1
                if got == want:
                    res["equal"] += 1
                else:
                    res["bad"].append(f"{node.name or node.op_type}: {what} {formula} = {got} at {env}, "
                                      f"the run's shapes give {want}")  # fmt: skip
        # the peak, replayed over the run's sizes (the values graphlsp sizes, so the same set)
        order = graph.topological_order()

        def size(v: Any, run: dict[str, Any] = run) -> int | None:
            from graphlsp.cost.formula import value_bytes

            if value_bytes(refiner.type_of(v)) is None:
                return None
            x = concrete(v.name, run)
            if x is None:
                return -1  # graphlsp sizes it, the run has no such tensor: never equal
            b = bytes_of(x[1], int(np.prod(x[0], dtype=np.int64)))
            return b if isinstance(b, int) else -1

        truth_peak = replay(order, activations(graph, order), size)
        want_peak = max((x.value({}) or 0 for x, _ in truth_peak.candidates), default=None)
        got_peak, _ = cost.peak.value(env)
        res["peak"].append({"env": env, "graphlsp": got_peak, "replay": want_peak})
        if got_peak is not None and got_peak != want_peak:
            res["bad"].append(f"peak at {env}: formula {got_peak}, replay {want_peak}")
    return res


def _sum_bytes(xs: list[Any], bytes_of: Any) -> int | None:
    total = 0
    for x in xs:
        if x is None:
            continue
        b = bytes_of(x[1], int(np.prod(x[0], dtype=np.int64)))
        if not isinstance(b, int):
            return None
        total += b
    return total


def _params_check(path: Path, cost: Any) -> dict[str, int]:
    """graphlsp's initializer bytes against what onnx stores for every graph's initializers."""
    if path.suffix == ".onnx":
        model = onnx.load(str(path), load_external_data=False)
    else:
        model = onnx.parser.parse_model(path.read_text(encoding="utf-8"))
    total = 0

    def graphs(g: onnx.GraphProto) -> Any:
        yield g
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from graphs(a.g)
                for sub in a.graphs:
                    yield from graphs(sub)

    for g in graphs(model.graph):
        seen: set[str] = set()
        for t in g.initializer:
            if t.name in seen:
                continue
            seen.add(t.name)
            total += _stored_bytes(t)
    return {"graphlsp": cost.params.of_kind("initializer")[1], "onnx": total}


def _stored_bytes(t: onnx.TensorProto) -> int:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        if "length" in info:
            return int(info["length"])
    if t.HasField("raw_data"):
        return len(t.raw_data)
    return int(onnx.numpy_helper.to_array(t).nbytes)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*")
    p.add_argument("--sizes", type=int, default=3)
    p.add_argument("--json")
    args = p.parse_args(argv)
    paths = [Path(m) for m in args.models] or default_models()
    results = []
    bad = 0
    totals = {"judged": 0, "equal": 0, "unknown": 0, "unbound": 0, "bodies": 0, "concrete_unknown": 0}
    peaks = [0, 0, 0]  # runs, equal, not a formula in the input dims (graphlsp's own symbols)
    for path in paths:
        try:
            r = judge(path, args.sizes)
        except Exception as e:  # noqa: BLE001
            r = {"model": str(path), "error": f"{type(e).__name__}: {e}", "bad": []}
        results.append(r)
        for k in totals:
            totals[k] += r.get(k, 0)
        for pk in r.get("peak", []):
            peaks[0] += 1
            peaks[1] += pk["graphlsp"] is not None and pk["graphlsp"] == pk["replay"]
            peaks[2] += pk["graphlsp"] is None
        bad += len(r["bad"])
        what = r.get("error") or (f"{len(r.get('runs', []))} sizes, {r['equal']}/{r['judged']} equal, "
                                  f"{r['unknown']} unknown, {r['unbound']} data-dependent, {r['bodies']} bodies; peak "
                                  + ", ".join(f"{x['graphlsp']}={x['replay']}" for x in r["peak"])
                                  + f"; params {r['params']['graphlsp']}/{r['params']['onnx']}")  # fmt: skip
        print(f"{Path(r['model']).name:<44} {'BAD ' if r['bad'] else ''}{what}")
        for line in r["bad"][:5]:
            print(f"    {line}")
    print(f"total: {len(paths)} models, {totals['equal']}/{totals['judged']} counts equal, {totals['unknown']} unknown,"
          f" {totals['unbound']} data-dependent, {totals['bodies']} nodes with bodies; peak {peaks[1]}/{peaks[0]} "
          f"equal, {peaks[2]} not a formula in the input dims; {bad} differences")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
