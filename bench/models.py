"""The benchmark models: ../shared/bench/gpt_L{24,96}.onnxtxt when present, else a comparable generated text.

The generated model has the exporter's shape: dynamic [batch, seq] input, per-block Shape -> Gather -> Unsqueeze
-> Concat -> Reshape plumbing, LayerNormalization, MatMul/Add projections, Split, Transpose, Softmax and an Erf
GELU, weights as typed graph inputs, quoted `/b.N/...` names. About 99 nodes per layer, like the exported files.
"""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench"
NODES_PER_LAYER = 99


def load(name: str) -> tuple[str, str]:
    """(text, where it came from) for gpt_L24 or gpt_L96."""
    path = SHARED / f"{name}.onnxtxt"
    if path.exists():
        return path.read_text(encoding="utf-8"), str(path)
    layers = int(name.split("_L")[1])
    return generate_gpt(layers), f"generated (no {path})"


def _block(i: int, x: str, inputs: list[str]) -> tuple[list[str], str]:
    p = f"/b.{i}"
    w = f"b.{i}"
    inputs += [
        f'float[16] "{w}.l1.weight"', f'float[16] "{w}.l1.bias"', f'float[16] "{w}.l2.weight"',
        f'float[16] "{w}.l2.bias"', f'float[16,48] "{w}.a.qkv.w"', f'float[48] "{w}.a.qkv.bias"',
        f'float[16,16] "{w}.a.o.w"', f'float[16] "{w}.a.o.bias"', f'float[16,64] "{w}.m.0.w"',
        f'float[64] "{w}.m.0.bias"', f'float[64,16] "{w}.m.2.w"', f'float[16] "{w}.m.2.bias"',
    ]  # fmt: skip
    n: list[str] = []

    def node(name: str, op: str, args: str, attrs: str = "") -> str:
        out = f'"{p}/{name}_output_0"'
        n.append(f'   ["{p}/{name}"] {out} = {op}{" " + attrs if attrs else ""} ({args})')
        return out

    def const(name: str, value: str) -> str:
        return node(name, "Constant", "", f"<value: tensor = {value}>")

    ln1 = node("l1/LayerNormalization", "LayerNormalization", f'{x}, "{w}.l1.weight", "{w}.l1.bias"',
               "<axis: int = -1, epsilon: float = 1e-05>")  # fmt: skip
    shape = node("a/Shape", "Shape", ln1)
    batch = node("a/Gather", "Gather", f"{shape}, {const('a/Constant', 'int64 {0}')}", "<axis: int = 0>")
    seq = node("a/Gather_1", "Gather", f"{shape}, {const('a/Constant_1', 'int64 {1}')}", "<axis: int = 0>")
    qkv = node("a/qkv/MatMul", "MatMul", f'{ln1}, "{w}.a.qkv.w"')
    qkv = node("a/qkv/Add", "Add", f'"{w}.a.qkv.bias", {qkv}')
    sizes = const("a/Constant_2", "int64[3] {16,16,16}")
    q, k, v = (f'"{p}/a/Split_output_{j}"' for j in range(3))
    n.append(f'   ["{p}/a/Split"] {q}, {k}, {v} = Split <axis: int = 2> ({qkv}, {sizes})')
    heads = []
    for j, (t, perm) in enumerate([(q, "0, 2, 1, 3"), (k, "0, 2, 3, 1"), (v, "0, 2, 1, 3")]):
        axes = const(f"a/Constant_{3 + 4 * j}", "int64[1] {0}")
        u0 = node(f"a/Unsqueeze_{2 * j}", "Unsqueeze", f"{batch}, {axes}")
        u1 = node(f"a/Unsqueeze_{2 * j + 1}", "Unsqueeze", f"{seq}, {axes}")
        c2 = const(f"a/Constant_{4 + 4 * j}", "int64[1] {2}")
        c8 = const(f"a/Constant_{5 + 4 * j}", "int64[1] {8}")
        cat = node(f"a/Concat_{j}", "Concat", f"{u0}, {u1}, {c2}, {c8}", "<axis: int = 0>")
        r = node(f"a/Reshape_{j}", "Reshape", f"{t}, {cat}")
        heads.append(node(f"a/Transpose_{j}", "Transpose", r, f"<perm: ints = [{perm}]>"))
        node(f"a/Identity_{j}", "Identity", cat)  # exporters leave such copies around
    scores = node("a/MatMul", "MatMul", f"{heads[0]}, {heads[1]}")
    scores = node("a/Mul", "Mul", f"{scores}, {const('a/Constant_20', 'float {0.35355338}')}")
    probs = node("a/Softmax", "Softmax", scores, "<axis: int = -1>")
    ctx = node("a/MatMul_1", "MatMul", f"{probs}, {heads[2]}")
    ctx = node("a/Transpose_3", "Transpose", ctx, "<perm: ints = [0, 2, 1, 3]>")
    axes = const("a/Constant_21", "int64[1] {0}")
    u0 = node("a/Unsqueeze_6", "Unsqueeze", f"{batch}, {axes}")
    u1 = node("a/Unsqueeze_7", "Unsqueeze", f"{seq}, {axes}")
    cat = node("a/Concat_3", "Concat", f"{u0}, {u1}, {const('a/Constant_22', 'int64[1] {16}')}", "<axis: int = 0>")
    ctx = node("a/Reshape_3", "Reshape", f"{ctx}, {cat}")
    out = node("a/o/MatMul", "MatMul", f'{ctx}, "{w}.a.o.w"')
    out = node("a/o/Add", "Add", f'"{w}.a.o.bias", {out}')
    res = node("Add", "Add", f"{x}, {out}")
    ln2 = node("l2/LayerNormalization", "LayerNormalization", f'{res}, "{w}.l2.weight", "{w}.l2.bias"',
               "<axis: int = -1, epsilon: float = 1e-05>")  # fmt: skip
    h = node("m/m.0/MatMul", "MatMul", f'{ln2}, "{w}.m.0.w"')
    h = node("m/m.0/Add", "Add", f'"{w}.m.0.bias", {h}')
    d = node("m/m.1/Div", "Div", f"{h}, {const('m/m.1/Constant', 'float {1.4142135}')}")
    e = node("m/m.1/Erf", "Erf", d)
    a = node("m/m.1/Add", "Add", f"{e}, {const('m/m.1/Constant_1', 'float {1}')}")
    g = node("m/m.1/Mul", "Mul", f"{h}, {a}")
    g = node("m/m.1/Mul_1", "Mul", f"{g}, {const('m/m.1/Constant_2', 'float {0.5}')}")
    h = node("m/m.2/MatMul", "MatMul", f'{g}, "{w}.m.2.w"')
    h = node("m/m.2/Add", "Add", f'"{w}.m.2.bias", {h}')
    return n, node("Add_1", "Add", f"{res}, {h}")


def generate_gpt(layers: int) -> str:
    """An exporter-shaped text with about 99 * layers nodes (the generated blocks are smaller, so more of them)."""
    inputs = ["int64[batch,seq] idx", 'float[50,16] "e.weight"', 'float[16,50] "head.w"', 'float[50] "head.bias"']
    nodes = ['   ["/e/Gather"] "/e/Gather_output_0" = Gather ("e.weight", idx)']
    x = '"/e/Gather_output_0"'
    i = 0
    while len(nodes) < layers * NODES_PER_LAYER:
        block, x = _block(i, x, inputs)
        nodes += block
        i += 1
    nodes.append(f'   ["/head/MatMul"] "/head/MatMul_output_0" = MatMul ({x}, "head.w")')
    nodes.append('   ["/head/Add"] logits = Add ("head.bias", "/head/MatMul_output_0")')
    header = '<\n   ir_version: 8,\n   opset_import: ["" : 17],\n   producer_name: "graphlsp-bench"\n>\n'
    return (
        header + f"main_graph ({', '.join(inputs)}) => (float[batch,seq,50] logits) {{\n" + "\n".join(nodes) + "\n}\n"
    )
