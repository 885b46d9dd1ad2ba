"""A kernel table read from the onnxruntime installed next to graphlsp (optional): its registered kernels, the
operator schemas onnxruntime resolves kernel type strings with, and the newest IR version and opsets it loads.

The same reader makes the CPU table shipped in the package (tools/ort_kernel_tables.py)."""

from __future__ import annotations

from typing import Any

INT_MAX = 2**31 - 1

PROVIDER_NAMES = {
    "CPUExecutionProvider": "cpu",
    "CUDAExecutionProvider": "cuda",
    "DmlExecutionProvider": "dml",
    "ROCMExecutionProvider": "rocm",
    "MIGraphXExecutionProvider": "migraphx",
    "JsExecutionProvider": "js",
    "WebGpuExecutionProvider": "webgpu",
    "CoreMLExecutionProvider": "coreml",
}


def short_type(t: str) -> str:
    """onnxruntime's `tensor(float)` as `float`; other kinds (seq, map, optional, sparse) as written."""
    return t[7:-1] if t.startswith("tensor(") else t


def merge_kernels(entries: list[tuple[int, int | None, dict[str, list[str]]]]) -> list[list[Any]]:
    """Kernels of one op, merged where exact: two kernels of the same versions whose constraints differ in one
    name only accept the union of that name's types (A x {a} + A x {b} = A x {a, b})."""
    groups: dict[tuple[int, int | None, tuple[str, ...]], list[dict[str, list[str]]]] = {}
    for start, end, cons in entries:
        groups.setdefault((start, end, tuple(sorted(cons))), []).append({k: sorted(set(v)) for k, v in cons.items()})
    out: list[list[Any]] = []
    for (start, end, _), items in groups.items():
        changed = True
        while changed:
            changed = False
            for i in range(len(items)):
                for j in range(i + 1, len(items)):
                    a, b = items[i], items[j]
                    diff = [k for k in a if a[k] != b[k]]
                    if len(diff) <= 1:
                        if diff:
                            a[diff[0]] = sorted(set(a[diff[0]]) | set(b[diff[0]]))
                        del items[j]
                        changed = True
                        break
                if changed:
                    break
        out += [[start, end, c] for c in items]
    out.sort(key=lambda e: (-e[0], str(e[2])))
    return out


def schema_table(schemas: Any, wanted: set[tuple[str, str]]) -> dict[str, dict[str, dict[str, Any]]]:
    """For each op of `wanted` and each of its schema versions: kernel type string -> the arguments it resolves
    to (onnxruntime's KernelTypeStrResolver: a type constraint name names every formal parameter of that type
    string, a formal parameter's name names that parameter), inputs first: {domain: {op: {since: {str: [[kind,
    index], ...]}}}}. A variadic parameter is the last one: its first argument has the parameter's index."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for s in schemas:
        if (s.domain, s.name) not in wanted:
            continue
        names = {c.type_param_str for c in s.type_constraints}
        args: dict[str, list[list[Any]]] = {}
        for kind, params in (("i", s.inputs), ("o", s.outputs)):
            for i, p in enumerate(params):
                if p.typeStr in names:
                    args.setdefault(p.typeStr, []).append([kind, i])
                args.setdefault(p.name, []).append([kind, i])
        out.setdefault(s.domain, {}).setdefault(s.name, {})[str(s.since_version)] = args
    return out


def read_installed() -> dict[str, Any] | None:
    """Every provider's kernels registered in the installed onnxruntime, its schemas and the versions it loads;
    None without onnxruntime."""
    try:
        import onnxruntime
        from onnxruntime.capi import _pybind_state as C
    except Exception:  # not installed, or broken: the shipped tables stand
        return None
    by_provider: dict[str, dict[str, dict[str, list[tuple[int, int | None, dict[str, list[str]]]]]]] = {}
    wanted: set[tuple[str, str]] = set()
    for k in C.get_all_opkernel_def():
        start, end = k.version_range
        cons = {name: [short_type(t) for t in types] for name, types in k.type_constraints.items()}
        provider = PROVIDER_NAMES.get(k.provider, k.provider)
        by_provider.setdefault(provider, {}).setdefault(k.domain, {}).setdefault(k.op_name, []).append(
            (start, None if end >= INT_MAX else end, cons))
        wanted.add((k.domain, k.op_name))
    schemas = list(C.get_all_operator_schema())
    wanted |= {(s.domain, s.name) for s in schemas}
    version = onnxruntime.__version__
    return {
        "runtime": "onnxruntime",
        "version": version,
        "source": f"the registry of the installed onnxruntime {version}",
        "providers": {
            p: {d: {op: merge_kernels(e) for op, e in sorted(ops.items())} for d, ops in sorted(domains.items())}
            for p, domains in by_provider.items()
        },
        "schemas": schema_table(schemas, wanted),
        "limits": probe_limits(sorted({s.domain for s in schemas})),
    }


def probe_limits(domains: list[str]) -> dict[str, Any]:
    """The newest IR version and opset of each domain the installed onnxruntime loads, found by loading an
    Identity model (a few milliseconds each): the versions are accepted when it loads, or when only the Identity
    kernel is missing."""
    import onnxruntime as ort
    from onnx import helper

    def loads(ir: int, imports: dict[str, int]) -> bool:
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", 1, [1])],
                              [helper.make_tensor_value_info("y", 1, [1])])  # fmt: skip
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in imports.items()])
        m.ir_version = ir
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        try:
            ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            # the versions were accepted, only the Identity of that opset has no kernel (1.15 at opset 19)
            return "NOT_IMPLEMENTED" in str(e) and "Identity(" in str(e)
        return True

    def highest(ok: Any, low: int, cap: int) -> int | None:
        if not ok(low):
            return None
        while low < cap and ok(low + 1):
            low += 1
        return low

    ir = highest(lambda v: loads(v, {"": 11}), 7, 64)
    opsets: dict[str, int] = {}
    for d in domains:
        if d == "":
            got = highest(lambda v: loads(7, {"": v}), 7, 128)
        else:
            got = highest(lambda v, d=d: loads(7, {"": 11, d: v}), 1, 128)
        if got is not None:
            opsets[d or "ai.onnx"] = got
    return {"ir_version": ir, "opsets": opsets}
