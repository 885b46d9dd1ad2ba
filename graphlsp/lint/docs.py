"""One page per rule, for `graphlsp rule CODE`, SARIF rule descriptions and the README: what it checks, why it
matters, an example that triggers it (tests check that every example does) and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass

H = '<ir_version: 10, opset_import: ["" : 21]>\n'


@dataclass(frozen=True, slots=True)
class RuleDoc:
    why: str
    example: str  # a whole model that triggers the rule ("" where no text can: file-level rules)
    fix: str


DOCS: dict[str, RuleDoc] = {
    "GL101": RuleDoc(
        "onnx's parser rejects the file, so nothing downstream can load it.",
        H + "g (float[N] x) => (float[N] y) {\n  y = Relu (x\n}\n",
        "Close the bracket, add the missing comma or value the message names.",
    ),
    "GL102": RuleDoc(
        "Protobuf text format (`graph { node { ... } }`) is another language; onnx's text parser cannot read it.",
        'ir_version: 8\ngraph {\n  node { input: "x" output: "y" op_type: "Relu" }\n}\n',
        "Load it with google.protobuf.text_format, save it with onnx.save, then `graphlsp convert m.onnx m.onnxtxt`.",
    ),
    "GL103": RuleDoc(
        "The token is well-formed but onnx gives it no meaning here: the parser fails or silently drops it.",
        "<ir_version: 10, opset_import: [\"\" : 21], author: \"me\">\n"
        "g (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n",
        "Use a known key, type or value of the right kind.",
    ),
    "GL104": RuleDoc(
        "onnx's printer writes `...` for tensor data it cannot print; the text no longer holds the tensor.",
        H + "g () => (float[2] y) {\n  y = Constant <value = float[2] {...}> ()\n}\n",
        "Convert from the binary model with raw data kept, or write the values out.",
    ),
    "GL105": RuleDoc("ONNX text is UTF-8; other bytes are read as U+FFFD.", "", "Save the file as UTF-8."),
    "GL106": RuleDoc("onnx cannot load the binary model.", "", "Re-export the model; check it is not truncated."),
    "GL107": RuleDoc(
        "A tensor whose data lives in another file must name a file inside the model's folder, and that file must "
        "hold the bytes: onnxruntime refuses a location that leaves the folder and fails on a missing or short "
        "file. graphlsp never opens such a location.",
        H + 'g () => (float[4] y) <float[4] w = ["location": "../w.bin"]> {\n  y = Identity (w)\n}\n',
        "Keep the data file beside the model (save with onnx.save_model(..., save_as_external_data=True)); "
        "re-export if the file is short.",
    ),
    "GL110": RuleDoc(
        "A dim of -1 is not a valid size; paddle2onnx and older exporters write it for a dynamic dim. It is read as "
        "unknown; onnxruntime does the same, other tools may take it literally.",
        "",
        "Re-export with a named dynamic dim (dim_param), or leave it: graphlsp treats it as unknown.",
    ),
    "GL210": RuleDoc(
        "onnxruntime removes an initializer nothing reads (and warns when it loads the model); it is dead weight "
        "in the file.",
        H + "g (float[N] x) => (float[N] y) <float[2] w = {1, 2}> {\n  y = Relu (x)\n}\n",
        "Remove the initializer (onnx.helper or onnxruntime's optimizer do it), or read it where it was meant to be.",
    ),
    "GL211": RuleDoc(
        "The op is not in the ONNX standard, although its domain is the standard's: one runtime defines it there "
        "(onnxruntime keeps SimplifiedLayerNormalization and a few experimental ops in the default domain). That "
        "runtime runs the model; onnx's checker, shape inference and every other runtime reject it. The message "
        "names the runtime, from the op library that declares the op (`graphlsp/oplib/libraries/`).",
        H + "g (float[N, 8] x, float[8] scale) => (float[N, 8] y) {\n"
        "  y = SimplifiedLayerNormalization <epsilon = 1e-6> (x, scale)\n}\n",
        "Keep it if the model only ever runs on that runtime; else use the standard op the message suggests "
        "(RMSNormalization, opset 23, for SimplifiedLayerNormalization) or the ops it stands for.",
    ),
    "GL201": RuleDoc(
        "A node reads a value that nothing produces: the model fails the checker and cannot run.",
        H + "g (float[N] x) => (float[N] y) {\n  y = Relu (z)\n}\n",
        "Use the right name (the message suggests the closest), or add the producer or input.",
    ),
    "GL202": RuleDoc(
        "ONNX graphs are in SSA form: each value is defined once.",
        H + "g (float[N] x) => (float[N] y) {\n  y = Relu (x)\n  y = Abs (x)\n}\n",
        "Rename the second definition and its uses.",
    ),
    "GL203": RuleDoc(
        "onnx's checker requires nodes in topological order. onnxruntime sorts the main graph's nodes when it "
        "loads a model and runs it, so there a node that reads a value before the node producing it is a warning: "
        "onnxruntime runs the model, onnx.checker (and tools that call it) refuse it. The nodes of an If/Loop/Scan "
        "body or of a function are not sorted (onnx's shape inference of the op reads them in order and fails): "
        "an error. A cycle, a node that needs its own output (directly, through other nodes or through a subgraph "
        "that reads it), runs nowhere: onnxruntime refuses it (`the graph is not acyclic`).",
        H + "g (float[N] x) => (float[N] y) {\n  y = Relu (a)\n  a = Abs (x)\n}\n",
        "Move the producer above its consumers; break cycles.",
    ),
    "GL204": RuleDoc(
        "No schema and no model-local function defines the op: runtimes reject the model.",
        H + "g (float[N] x) => (float[N] y) {\n  y = Rleu (x)\n}\n",
        "Fix the spelling (quick fix: the closest known op) or define the function.",
    ),
    "GL205": RuleDoc(
        "A node's domain must be imported in opset_import, or runtimes cannot resolve the op.",
        H + "g (float[N] x) => (float[N] y) {\n  y = com.acme.Gelu (x)\n}\n",
        'Add `"com.acme" : 1` to opset_import (quick fix).',
    ),
    "GL206": RuleDoc(
        "Node names identify nodes in tools and error messages; duplicates make them ambiguous.",
        H + "g (float[N] x) => (float[N] y) {\n  [n] a = Relu (x)\n  [n] y = Abs (a)\n}\n",
        "Give each node its own label.",
    ),
    "GL207": RuleDoc(
        "A value nothing reads is dead code: it costs compute and hides mistakes.",
        H + "g (float[N] x) => (float[N] y) {\n  spare = Neg (x)\n  y = Relu (x)\n}\n",
        "Remove the node (quick fix) or use the value.",
    ),
    "GL208": RuleDoc(
        "A graph output must be defined by a node, an input or an initializer.",
        H + "g (float[N] x) => (float[N] y, float[N] z) {\n  y = Relu (x)\n}\n",
        "Produce the output or remove it from the signature.",
    ),
    "GL209": RuleDoc(
        "The op exists, but not at the imported opset version (too new, or removed).",
        '<ir_version: 10, opset_import: ["" : 13]>\ng (float[N, 4] x) => (float[N, 4] y) {\n'
        "  y = LayerNormalization (x)\n}\n",
        "Import a newer opset, or use the ops of the imported one.",
    ),
    "GL301": RuleDoc(
        "Element-wise ops broadcast their inputs (numpy rules); these shapes cannot.",
        H + "g (float[N, 8] a, float[3] b) => (float[N, 8] y) {\n  y = Add (a, b)\n}\n",
        "Reshape, transpose or slice an input so the trailing dims match or are 1.",
    ),
    "GL302": RuleDoc(
        "A matrix product needs the inner dimensions to agree.",
        H + "g (float[N, 4] a, float[5, 8] b) => (float[N, 8] y) {\n  y = MatMul (a, b)\n}\n",
        "Use the weight of the right shape, or transpose it (Gemm transA/transB).",
    ),
    "GL303": RuleDoc(
        "Concat inputs must agree in every dim but the axis.",
        H + "g (float[2, 3] a, float[2, 4] b) => (float[4, 3] y) {\n  y = Concat <axis = 0> (a, b)\n}\n",
        "Concatenate along the dim that differs, or fix the inputs.",
    ),
    "GL304": RuleDoc(
        "Reshape keeps the element count: 24 elements cannot become 5x5.",
        H + "g (float[4, 6] x) => (float[5, 5] y) {\n  s = Constant <value = int64[2] {5, 5}> ()\n"
        "  y = Reshape (x, s)\n}\n",
        "Fix the target shape (use -1 for the dim to infer).",
    ),
    "GL305": RuleDoc(
        "Conv's input channels must equal the weight's channels times group.",
        H + "g (float[1, 3, 8, 8] x, float[4, 2, 3, 3] w) => (float[1, 4, 6, 6] y) {\n  y = Conv (x, w)\n}\n",
        "Use a weight with C/group input channels, or set group.",
    ),
    "GL306": RuleDoc(
        "The kernel (with dilation) does not fit in the padded input: the output would be empty.",
        H + "g (float[1, 1, 2, 2] x, float[1, 1, 3, 3] w) => (float[1, 1, 1, 1] y) {\n  y = Conv (x, w)\n}\n",
        "Pad the input, or use a smaller kernel.",
    ),
    "GL307": RuleDoc(
        "Transpose's perm must be a permutation of the input's axes.",
        H + "g (float[2, 3] x) => (float[3, 2] y) {\n  y = Transpose <perm = [1, 2]> (x)\n}\n",
        "List each axis once.",
    ),
    "GL308": RuleDoc(
        "Split sizes must add up to the dim being split.",
        H + "g (float[6] x) => (float[2] a, float[3] b) {\n  s = Constant <value = int64[2] {2, 3}> ()\n"
        "  a, b = Split (x, s)\n}\n",
        "Fix the sizes, or use num_outputs.",
    ),
    "GL309": RuleDoc(
        "An axis must lie in [-rank, rank-1].",
        H + "g (float[2, 3] x) => (float[2, 3] y) {\n  y = Softmax <axis = 2> (x)\n}\n",
        "Use an axis within the input's rank.",
    ),
    "GL310": RuleDoc(
        "A known index outside its dimension fails at run time.",
        H + "g (float[3, 4] x) => (float[4] y) {\n  i = Constant <value = int64 {5}> ()\n"
        "  y = Gather <axis = 0> (x, i)\n}\n",
        "Index within the dimension.",
    ),
    "GL311": RuleDoc(
        "Each input's type must be one its type constraint allows, and inputs sharing a constraint must agree.",
        H + "g (int64[4] x) => (int64[4] y) {\n  y = Softmax (x)\n}\n",
        "Cast the input to an allowed type.",
    ),
    "GL312": RuleDoc(
        "The op takes a fixed range of inputs.",
        H + "g (float[4] x) => (float[4] y) {\n  y = Relu (x, x)\n}\n",
        "Pass the inputs the op takes (empty names for skipped optional ones).",
    ),
    "GL313": RuleDoc(
        "A required attribute has no default.",
        H + "g (float[4] x) => (float[4] y) {\n  y = Cast (x)\n}\n",
        "Add the attribute.",
    ),
    "GL314": RuleDoc(
        "An attribute of the wrong type is rejected by the checker; an unknown one is ignored by runtimes.",
        H + 'g (float[2, 3] x) => (float[2, 3] y) {\n  y = Softmax <axis = "last"> (x)\n}\n',
        "Use the attribute's type (see the hover on it).",
    ),
    "GL315": RuleDoc(
        "A declared type (graph output, value info) that contradicts inference misleads every tool reading it. "
        "A graph output's is an error (the graph's interface is wrong); a value_info entry's a warning (runtimes "
        "recompute value_info, so the model still runs). In a binary model, the value_info entries inference "
        "contradicts are one finding (how many, the first few): an exporter's annotations.",
        H + "g (float[2, 3] x) => (float[3, 2] y) {\n  y = Relu (x)\n}\n",
        "Declare the inferred type (quick fix) or fix the producer; in a binary, `check --fix` removes the "
        "contradicted value_info entries.",
    ),
    "GL316": RuleDoc(
        "graphlsp has no shape rule for the op, so its outputs and everything after are of unknown shape. Most "
        "often the op is in a custom domain that neither onnx's schemas nor an op library declare: then nothing "
        "about it is checked either (arity, attributes, types, shapes).",
        '<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
        "g (float[N, 8] x) => (float[N, 8] y) {\n  y = com.acme.Swizzle <groups = 2> (x)\n}\n",
        "Declare the op in an .onnxop file (see graphlsp/oplib/README.md) and list it in `op-libraries` of "
        "[tool.graphlsp]: `op com.acme.Swizzle { input x: T[N, C]  output y: T[N, C]  attr groups: int  type T: "
        "float }`. For an ai.onnx op, report it to graphlsp.",
    ),
    "GL317": RuleDoc("Another shape or type inconsistency the op's rules detect.", "", "See the message."),
    "GL320": RuleDoc(
        "A dim the model declares dynamic, which the graph accepts only at some sizes: the node's rule holds only "
        "when an equation between expressions of that dim does, and graphlsp proves which sizes satisfy it (over "
        "one full period of the floors in it, never by trying sizes). The message names sizes at which the "
        "runtime fails at this node while every node before it runs; a condition that an earlier one implies is "
        "listed on the earlier one. Typical: a detector whose upsampled branch is concatenated with a skip "
        "connection (the height must be a multiple of the total stride), a position table that bounds the "
        "sequence length, a ViT's fixed patch grid. Information: a fact of the model's contract (shown in the "
        "input's hover and `graphlsp shapes`), and an error once `--dim` binds a size past it; a dim that only one "
        "size fits is GL321 instead.",
        H + "g (float[N, 8] x, float[4, 8] table) => (float[?, 8] y) {\n  y = Add (x, table)\n}\n",
        "Feed only the sizes the message allows, and say so in the dim's name or the model's documentation; or "
        "export again with a larger table or the dim truly dynamic. `graphlsp check --dim N=2 FILE` shows the "
        "error the runtime would give at that size.",
    ),
    "GL321": RuleDoc(
        "The model declares the dim dynamic (a dim_param), but a node accepts only one size: the declaration "
        "promises what the graph does not do. Most often a tracer wrote the example input's size into a Reshape, "
        "Expand or ConstantOfShape.",
        H + "g (float[N, 8] x) => (float[1, 8] y) {\n  shape = Constant <value = int64[2] {1, 8}> ()\n"
        "  y = Reshape (x, shape)\n}\n",
        "Declare the dim with its one size, or export again so that the node follows the input's size.",
    ),
    "GL399": RuleDoc("A shape rule failed inside graphlsp: a bug.", "", "Report it with the model."),
    "GL401": RuleDoc(
        "Every run recomputes a value that never changes; runtimes and converters see an op where a constant "
        "would do (onnxruntime folds it at load time, other tools may not).",
        H + "g (float[N] x) => (float[N] y) {\n  two = Constant <value = float {2}> ()\n  four = Mul (two, two)\n"
        "  y = Mul (x, four)\n}\n",
        "`graphlsp fold FILE` (or the quick fix) turns each maximal constant subgraph into one Constant per value "
        "still used; the rest of the file stays byte-identical.",
    ),
    "GL402": RuleDoc(
        "Exporters build Reshape targets from Shape -> Gather -> Unsqueeze -> Concat at run time; with 0 (copy the "
        "input's dim) the target is a constant and the plumbing goes, as onnxruntime's optimizer does.",
        H + "g (float[N, 8] x) => (float[N, 2, 4] y) {\n  s = Shape (x)\n  i = Constant <value = int64[1] {0}> ()\n"
        "  n = Gather <axis = 0> (s, i)\n  tail = Constant <value = int64[2] {2, 4}> ()\n"
        "  target = Concat <axis = 0> (n, tail)\n  y = Reshape (x, target)\n}\n",
        "`graphlsp fold FILE` (or the quick fix) writes the constant target, e.g. `[0, 2, 4]`.",
    ),
    "GL403": RuleDoc(
        "The node's inputs are all known, and evaluating it fails: it fails the same way at run time.",
        H + "g (float[N] x) => (float[N] y, int64 q) {\n  a = Constant <value = int64 {6}> ()\n"
        "  b = Constant <value = int64 {0}> ()\n  q = Div (a, b)\n  y = Relu (x)\n}\n",
        "Fix the constant (a zero divisor, an index outside its dimension) or the computation that produces it.",
    ),
    "GL501": RuleDoc(
        "A suppression that suppresses nothing hides nothing but keeps readers guessing; it outlived its reason.",
        H + "g (float[N] x) => (float[N] y) {\n  y = Relu (x)  # noqa: GL301\n}\n",
        "Remove the comment.",
    ),
    "GL601": RuleDoc(
        "graphlsp reads an op library file declaration by declaration: a declaration that does not parse is left "
        "out, and the nodes of its op are reported as undeclared (GL316) or unknown.",
        "",  # a library file, not a model: `op com.acme.Foo { input x: T[N }`
        "Close the bracket, add the missing `:` or name the message says (graphlsp/oplib/README.md has the "
        "language).",
    ),
    "GL602": RuleDoc(
        "A declaration with an error (a type that does not exist, a dim of an output that no input binds, an "
        "unknown function) cannot be checked against nodes, so the op is left out of the library.",
        "",  # `op com.acme.Foo { input x: T[N]  output y: T[M]  type T: float }`: M is bound by no input
        "Declare what the message names: the type constraint, the dim in some input's shape, the attribute.",
    ),
    "GL603": RuleDoc(
        "The declaration is used, but part of it does nothing or is never used: a type constraint no input or "
        "output has, a `dim` statement for a symbol no input binds, an op that onnx already defines.",
        "",  # `op com.acme.Foo { input x: float  output y: float  type T: float }`: T is never used
        "Remove what is unused, or use it.",
    ),
    "GL701": RuleDoc(
        "onnx's checker accepts the model, but the runtime it is for refuses to load it: `NOT_IMPLEMENTED : Could "
        "not find an implementation for Abs(13)`. Each node is looked up in the kernel registry of each target "
        "(`targets`, default onnxruntime:cpu) as onnxruntime does: the op's schema version (a kernel registered "
        "open-ended matches only its first version) and the element types inferred for each type constraint. "
        "Nodes of If/Loop/Scan bodies and of model-local functions (at each call, with that call's types) are "
        "checked; an op without a kernel that onnx defines by a function body is inlined, and its body's nodes "
        "must have kernels. On CPU a float16 node without a float16 kernel loads (onnxruntime runs it in float32 "
        "between inserted Casts): that is a warning; bfloat16 gets no such rescue. See docs/deployment.md.",
        H + "g (bfloat16[N] x) => (bfloat16[N] y) {\n  y = Abs (x)\n}\n",
        "Cast to a type the message lists before the node and back after it, keep that part of the model in "
        "float32, or pick a target that has the kernel.",
    ),
    "GL702": RuleDoc(
        "On a GPU target (onnxruntime:cuda, onnxruntime:dml) a node without a kernel there but with one on CPU "
        "still loads: onnxruntime places it on CPU and copies its inputs to the host and its outputs back, every "
        "run. Example (with `targets = [\"onnxruntime:cuda\"]`): CUDA's Max has no int8 kernel.",
        H + "g (int8[N] x) => (int8[N] y) {\n  y = Max (x, x)\n}\n",
        "Use a type the message lists for the provider (a Cast around the node), or accept the copies.",
    ),
    "GL703": RuleDoc(
        "onnxruntime refuses a model whose IR version, or the version of an opset it imports, is newer than the "
        "release supports (`Unsupported model IR version`, `Current official support for domain ai.onnx is till "
        "opset 28`). The limits are the target release's: the current one's (the installed onnxruntime's, else the "
        "shipped table's), or those of the release the target names (`onnxruntime@1.16:cpu`), from a table of "
        "every onnxruntime release.",
        '<ir_version: 15, opset_import: ["" : 21]>\ng (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n',
        "Export with an older opset and IR version (torch.onnx.export(..., opset_version=...)), or upgrade "
        "onnxruntime.",
    ),
}
