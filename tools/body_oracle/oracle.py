"""One model judged: runs found (two valid assignments per scenario, or a node test's own inputs), every body value
recorded in each, graphlsp's types (and the peers') judged against what ran."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx

from .bodies import bodies, tagged_copy
from .claims import graphlsp_types, run_peer
from .dims import Evaluator, looks_like_name
from .engines import Engines, Recorder, alarm, disarm, short
from .feeds import CANDIDATES, assignment, control_inputs, degenerate, input_symbols, make_feeds
from .judge import CLASSES, Result, fmt_seen, fmt_shape, judge

MAX_RUNS = 4  # runs per scenario when a data-dependent branch ran in only one of the first two


def find_runs(model: onnx.ModelProto, eng: Engines, res: Result, timeout: float, deadline: float) -> list[dict]:
    """Two valid runs per scenario (see the module docstring), more (up to MAX_RUNS) while some body value ran in
    only one of them (a branch the data picks); returns [{env, try, scenario}]."""
    inputs, symbols = input_symbols(model)
    out: list[dict] = []
    scenarios = (0, 1) if control_inputs(inputs) else (0,)
    has_int = any(np.issubdtype(onnx.helper.tensor_dtype_to_np_dtype(e), np.integer) for _, e, _ in inputs)
    init_dims = {t.name: list(t.dims) for t in model.graph.initializer}

    def enough(good: list[dict]) -> bool:
        if len(good) < 2:
            return False
        if len(good) >= MAX_RUNS:
            return True
        mine = set(range(len(out), len(out) + len(good)))
        return all(len(mine & set(per_run)) != 1 for per_run in eng.recorder.seen.values())

    for scenario in scenarios:
        good: list[dict] = []
        tried: set = set()
        plan = [(reseed, variant, merge, cand) for reseed in (0, 1) for variant in ((0, 1, 2) if has_int else (0,))
                for merge in (False, True) for cand in CANDIDATES]  # fmt: skip
        for reseed, variant, merge, cand in plan:
            if enough(good) or time.monotonic() > deadline or (reseed and len(good) < 2):
                break  # reseed: the same sizes with other random data, for a branch the data picks
            env = assignment(symbols, cand, merge)
            if env is None:
                continue
            key = (reseed, variant, tuple(sorted(env.items())))
            if key in tried or (good and not all(good[0]["env"][k] != env[k] for k in env)):
                continue
            tried.add(key)
            label = (f"s{scenario}/{cand[0]}" + ("+merge" if merge else "") + (f"/ints{variant}" if variant else "")
                     + ("/reseed" if reseed else ""))  # fmt: skip
            rng = np.random.default_rng(1234 + len(tried))
            try:
                feeds = make_feeds(inputs, env, rng, variant, scenario)
                ort_vals = eng.ort(feeds)
            except Exception as e:  # noqa: BLE001
                res.skipped.append(f"{label}: onnxruntime {short(e, 100)}")
                continue
            shapes = {n: list(v.shape) for n, v in ort_vals.items() if isinstance(v, np.ndarray)}
            bad = degenerate(model, shapes, feeds, init_dims)
            if bad:
                res.skipped.append(f"{label}: degenerate ({bad})")
                continue
            run = len(out) + len(good)
            alarm(timeout)
            try:
                ref_vals = eng.reference(feeds, run)
            except Exception as e:  # noqa: BLE001
                _forget(eng.recorder, run)
                res.skipped.append(f"{label}: reference {short(e, 100)}")
                continue
            finally:
                disarm()
            why = eng.disagreement(ort_vals, ref_vals)
            if why:
                _forget(eng.recorder, run)
                res.skipped.append(f"{label}: reference and onnxruntime differ at {why}")
                continue
            good.append({"env": env, "try": label, "scenario": scenario})
        out += good
    return out


def _forget(rec: Recorder, run: int) -> None:
    for per_run in rec.seen.values():
        per_run.pop(run, None)


def evaluate(model: onnx.ModelProto, name: str, path: str | None = None, timeout: float = 300,
             feeds: dict[str, np.ndarray] | None = None, expected: list[np.ndarray] | None = None,
             peers: list[str] = ()) -> Result:  # type: ignore[assignment]  # fmt: skip
    """Judge graphlsp's body values of one model (and each of `peers`' on the same runs). `feeds` (with
    `expected` outputs, as onnx's node tests give them) runs once on those inputs instead of searching for two
    assignments."""
    t0 = time.monotonic()
    res = Result(name)
    tagged, table = tagged_copy(model)
    res.bodies = len(table)
    res.body_nodes = sum(len(g.node) for _, g in bodies(model.graph))
    if not table:
        res.error = "no subgraphs"
        return res
    try:
        eng = Engines(model, table, tagged)
    except Exception as e:  # noqa: BLE001
        res.error = f"reference evaluator cannot load it: {short(e)}"
        return res
    if feeds is not None:
        runs = _fixed_run(eng, feeds, expected, res, timeout)
    else:
        if eng.sess is None:
            res.error = f"onnxruntime cannot load it: {eng.ort_error}"
            return res
        runs = find_runs(model, eng, res, timeout, t0 + timeout)
    res.runs = runs
    if not runs:
        res.error = "not runnable: " + (res.skipped[-1] if res.skipped else "no assignment")
        return res
    symbols = sorted({k for r in runs for k in r["env"]})
    ev = Evaluator(symbols)
    tool = graphlsp_types(model, path, table)
    envs = [r["env"] for r in runs]
    observed = {key: {r: s for r, s in seen.items() if r < len(runs)} for key, seen in eng.recorder.seen.items()}
    observed = {key: seen for key, seen in observed.items() if seen}
    for peer in peers:
        types, err = run_peer(peer, path, model, table, timeout)
        if types is None:
            res.peer_errors[peer] = err
            continue
        counts = res.peer_counts[peer] = dict.fromkeys(CLASSES, 0)
        for (tag, vname), seen in observed.items():
            pv = judge(types.get(tag, {}).get(vname), seen, envs, ev)
            counts[pv.cls] += 1
            res.peer_classes.setdefault(f"{table[tag].label}:{vname}", {})[peer] = pv.cls
    bare: dict[tuple[int, str], set[int]] = {}
    for (tag, vname), seen in observed.items():
        t = tool.get((tag, vname))
        v = judge(t, seen, envs, ev)
        res.counts[v.cls] += 1
        res.values += 1
        res.one_run += v.one_run
        res.varying += v.varying
        label = table[tag].label
        res.classes[f"{label}:{vname}"] = v.cls
        res.per_body.setdefault(label, dict.fromkeys(CLASSES, 0))[v.cls] += 1
        if v.cls in "PU":
            res.open.append({"body": label, "name": vname, "cls": v.cls, "graphlsp": fmt_shape(*(t or (None, None))),
                             "runtime": [fmt_seen(seen[r]) for r in sorted(seen)]})  # fmt: skip
        if v.cls == "W":
            res.wrong.append({"body": label, "name": vname, "why": v.why, "graphlsp": fmt_shape(*(t or (None, None))),
                              "runtime": [fmt_seen(seen[r]) for r in sorted(seen)]})  # fmt: skip
        if t is not None and t[1] is not None:
            for r, obs in seen.items():
                for i, dm in enumerate(t[1]):
                    if isinstance(dm, str) and dm not in envs[r] and looks_like_name(dm):
                        bare.setdefault((r, dm), set()).update(s[i] for _, s in obs if len(s) > i)
    res.inconsistent = sorted({s for (_, s), sizes in bare.items() if len(sizes) > 1})
    rank = {"E": 2, "P": 1, "U": 0, "W": -1}
    for key, by_peer in res.peer_classes.items():
        mine = res.classes.get(key, "U")
        if mine != "W" and any(rank[c] > rank[mine] for c in by_peer.values()):
            res.behind.append(key)
    res.time = time.monotonic() - t0
    return res


def _fixed_run(eng: Engines, feeds: dict, expected: list | None, res: Result, timeout: float) -> list[dict]:
    alarm(timeout)
    try:
        ref_vals = eng.reference(feeds, 0)
    except Exception as e:  # noqa: BLE001
        res.skipped.append(f"reference {short(e)}")
        return []
    finally:
        disarm()
    why = None
    if eng.sess is not None:
        try:
            why = eng.disagreement(eng.ort(feeds), ref_vals)
        except Exception as e:  # noqa: BLE001
            res.skipped.append(f"onnxruntime {short(e, 100)} (checked against the expected outputs instead)")
    if expected is not None and why is None:
        for o, want in zip(eng.model.graph.output, expected, strict=False):
            got: Any = ref_vals.get(o.name)
            if isinstance(want, np.ndarray) and (not hasattr(got, "shape") or tuple(got.shape) != want.shape):
                why = f"output {o.name}: expected {list(want.shape)}, reference {getattr(got, 'shape', got)}"
    if why:
        _forget(eng.recorder, 0)
        res.skipped.append(f"reference and onnxruntime / expected outputs differ at {why}")
        return []
    env: dict[str, int] = {}
    clash: set[str] = set()
    for vi in eng.model.graph.input:  # a tensor input's dim_params take the sizes fed
        x = feeds.get(vi.name)
        if not isinstance(x, np.ndarray) or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for dm, size in zip(vi.type.tensor_type.shape.dim, x.shape, strict=False):
            if dm.dim_param and env.setdefault(dm.dim_param, int(size)) != size:
                clash.add(dm.dim_param)
    return [{"env": {k: v for k, v in env.items() if k not in clash}, "try": "test inputs", "scenario": 0}]


def node_test_cases(filters: list[str]) -> Iterator[tuple[str, onnx.ModelProto, dict, list]]:
    """onnx's node test cases that have a subgraph (If, Loop, Scan, SequenceMap ...), with their inputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        cases = collect_testcases()
    for case in cases:
        if filters and not any(f in case.name for f in filters):
            continue
        if case.model is None or not any(True for _ in bodies(case.model.graph)) or not case.data_sets:
            continue
        ins, outs = case.data_sets[0]
        names = [i.name for i in case.model.graph.input]
        yield case.name, case.model, dict(zip(names, ins, strict=False)), list(outs)
