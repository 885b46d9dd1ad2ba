"""The two engines a body value is observed with: onnxruntime (every main-graph node output exposed) and onnx's
reference evaluator, subclassed to record every node output of every body run (each Loop / Scan iteration, each
taken branch), with a fixed Loop; and the alarm that bounds a reference run."""

from __future__ import annotations

import re
import signal
from typing import Any

import numpy as np
import onnx

from .bodies import Body


def _elem_name(dtype: np.dtype) -> str:
    try:
        return onnx.TensorProto.DataType.Name(onnx.helper.np_dtype_to_tensor_dtype(dtype)).lower()
    except Exception:  # noqa: BLE001
        return str(dtype)


class Recorder:
    """What the body runs computed: (tag, value) -> per run, the set of (dtype, shape) observed."""

    def __init__(self, table: dict[str, Body]) -> None:
        self.table = table
        self.run = -1
        self.seen: dict[tuple[str, str], dict[int, set[tuple[str, tuple[int, ...]]]]] = {}
        self.frames = 0
        self.not_tensor: set[tuple[str, str]] = set()

    def record(self, tag: str, results: dict[str, Any]) -> None:
        self.frames += 1
        for name in self.table[tag].outputs:
            if name not in results:
                continue
            v = results[name]
            if not isinstance(v, np.ndarray):
                if isinstance(v, np.generic):
                    v = np.asarray(v)
                else:
                    self.not_tensor.add((tag, name))
                    continue
            per_run = self.seen.setdefault((tag, name), {})
            per_run.setdefault(self.run, set()).add((_elem_name(v.dtype), tuple(int(x) for x in v.shape)))


def fixed_ops() -> list[type]:
    """onnx.reference's ops where they are wrong about shapes. onnx 1.23's Loop stacks scan outputs with
    `np.vstack`, which concatenates per-iteration tensors of rank >= 2 ([T*B, 8] for T iterations of [B, 8]) and
    turns scalars into [T, 1]; onnxruntime and the spec stack them on a new axis ([T, B, 8], [T])."""
    from onnx.reference.ops.op_loop import Loop as RefLoop

    class Loop(RefLoop):
        def _run(self, M: Any, cond: Any, *args: Any, context: Any = None, body: Any = None, attributes: Any = None,
                 bindings: Any = None) -> Any:  # fmt: skip
            body = self.body  # type: ignore[attr-defined]
            names_in, names_out = body.input_names, body.output_names
            inputs: dict[str, Any] = dict.fromkeys(names_in)
            for name, val in zip(names_in[2:], args, strict=False):
                inputs[name] = val
            if context is not None:
                inputs.update(context)
                for name, val in zip(names_in[2:], args, strict=False):
                    inputs[name] = val
            scans: list[list[Any]] = [[] for _ in range(self.K)]
            it = 0
            outputs: list[Any] = []
            if cond is None:
                cond = np.array(True)  # no condition input: the body sees true (onnxruntime's behaviour)
            while (cond is None or bool(np.asarray(cond).reshape(-1)[0])) and (M is None or it < int(M)):
                if names_in and names_in[0]:
                    inputs[names_in[0]] = np.array(it, dtype=np.int64 if M is None else M.dtype)
                if len(names_in) > 1 and names_in[1]:
                    inputs[names_in[1]] = cond
                outputs = self._run_body(inputs, attributes=attributes, bindings=bindings)  # type: ignore[attr-defined]
                for k in range(self.K):
                    scans[k].append(outputs[-self.K + k])
                cond = outputs[self.output_index[names_out[0]]]
                for i, o in zip(names_in[2:], names_out[1:], strict=False):
                    inputs[i] = outputs[self.output_index[o]]
                it += 1
            final = [inputs[i] for i in names_in[2:]] if it == 0 else list(outputs[1 : 1 + self.N])
            if any(not x for x in scans):
                raise RuntimeError("a Loop with scan outputs ran no iteration (their shape is unknown)")
            final += [np.stack(x) for x in scans]
            return self._check_and_fix_outputs(tuple(final))

    return [Loop]


def recording_evaluator(recorder: Recorder) -> type:
    from onnx.reference import ReferenceEvaluator

    class RecordingEvaluator(ReferenceEvaluator):
        """Subgraph evaluators are built with the class of their parent, so every body runs through this."""

        def run(  # type: ignore[override]
            self, output_names: Any, feed_inputs: Any, attributes: Any = None, intermediate: bool = False, **kw: Any
        ) -> Any:
            proto = self.proto_
            tag = proto.name if isinstance(proto, onnx.GraphProto) else None
            if tag is None or tag not in recorder.table or intermediate:
                return super().run(output_names, feed_inputs, attributes, intermediate, **kw)
            results: Any = super().run(None, feed_inputs, attributes, True, **kw)
            recorder.record(tag, results)
            return [results[n] for n in (output_names or self.output_names)]

    return RecordingEvaluator


def main_node_outputs(model: onnx.ModelProto) -> list[str]:
    return list(dict.fromkeys(o for n in model.graph.node for o in n.output if o))


def control_values(model: onnx.ModelProto) -> set[str]:
    """Main-graph values that steer a body: If conditions, Loop trip counts and conditions."""
    out: set[str] = set()
    for n in model.graph.node:
        if n.domain in ("", "ai.onnx") and n.op_type in ("If", "Loop"):
            out.update(x for x in n.input[: 1 if n.op_type == "If" else 2] if x)
    return out


class Timeout(Exception):
    pass


def alarm(seconds: float) -> None:
    def fire(*_: Any) -> None:
        raise Timeout(f"timed out after {seconds:.0f}s")

    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, seconds)


def disarm() -> None:
    if hasattr(signal, "SIGALRM"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def short(e: BaseException, n: int = 160) -> str:
    s = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", str(e).strip().replace("\n", " "))
    return (type(e).__name__ + ": " + s)[:n]


class Engines:
    """onnxruntime (every main-graph node output exposed) and the recording reference evaluator, on one model."""

    def __init__(self, model: onnx.ModelProto, table: dict[str, Body], tagged: onnx.ModelProto) -> None:
        import onnxruntime as ort

        ort.set_default_logger_severity(4)
        self.model = model
        self.names = main_node_outputs(model)
        self.control = control_values(model)
        self.sess = None
        self.ort_error = ""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        m2 = onnx.ModelProto()
        m2.CopyFrom(model)
        have = {o.name for o in m2.graph.output}
        m2.graph.output.extend(onnx.ValueInfoProto(name=n) for n in self.names if n not in have)
        for mm in (m2, model):
            try:
                self.sess = ort.InferenceSession(mm.SerializeToString(), so, providers=["CPUExecutionProvider"])
                break
            except Exception as e:  # noqa: BLE001
                self.ort_error = short(e)
        self.recorder = Recorder(table)
        self.ref = recording_evaluator(self.recorder)(tagged, new_ops=fixed_ops())

    def ort(self, feeds: dict) -> dict[str, Any]:
        assert self.sess is not None
        outs = [o.name for o in self.sess.get_outputs()]
        return dict(zip(outs, self.sess.run(outs, feeds), strict=True))

    def reference(self, feeds: dict, run: int) -> dict[str, Any]:
        self.recorder.run = run
        return self.ref.run(None, feeds, intermediate=True)

    def disagreement(self, ort_vals: dict[str, Any], ref_vals: dict[str, Any]) -> str | None:
        """Where the reference evaluator and onnxruntime differ on the main graph (None: they agree)."""
        for n, a in ort_vals.items():
            if not isinstance(a, np.ndarray):
                continue
            b = ref_vals.get(n)
            if b is None or not hasattr(b, "shape"):
                return f"{n}: reference gives {type(b).__name__}"
            b = np.asarray(b)
            if tuple(a.shape) != tuple(b.shape) or _elem_name(a.dtype) != _elem_name(b.dtype):
                ours, theirs = f"{_elem_name(a.dtype)}{list(a.shape)}", f"{_elem_name(b.dtype)}{list(b.shape)}"
                return f"{n}: onnxruntime {ours}, reference {theirs}"
            if n in self.control and not np.array_equal(a, b):
                return f"{n}: onnxruntime {a.tolist()}, reference {b.tolist()} (steers a body)"
        return None
