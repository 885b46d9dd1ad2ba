"""Exporter plumbing that execution resolves and inference must too (issue "As exact as execution").

Each test is a small model reproducing one pattern found in a real export (optimum, torchscript, paddle2onnx, ...)
where graphlsp used to lose a dim a peer (onnxruntime's symbolic shape inference, onnx-shape-inference) resolves;
the asserted type is what onnxruntime computes for every value of the graph inputs' symbols, never a guess.
"""

from __future__ import annotations

from tests.infer.helpers import infer


def types_of(body: str, opset: int = 17) -> dict[str, str]:
    types, findings = infer(f'<ir_version: 8, opset_import: ["" : {opset}]>\n{body}')
    assert [f for f in findings if f.severity == "error"] == [], [(f.code, f.message) for f in findings]
    return types


# ---------------------------------------------------------------- comparisons and Where on shape values
# optimum's `x.expand(b, -1, 1)`: the target is Where(Equal(shape, -1), 1, shape), as torch.onnx writes it
EXPAND_MINUS_ONE = """
g (int64[batch_size, sequence_length] position_ids, float[1, 8, 1] freq) => (float[batch_size, 8, 1] y) {
   s = Shape (position_ids)
   i0 = Constant <value = int64 {0}> ()
   b = Gather <axis = 0> (s, i0)
   ax = Constant <value = int64[1] {0}> ()
   bu = Unsqueeze (b, ax)
   m1 = Constant <value = int64[1] {-1}> ()
   one = Constant <value = int64[1] {1}> ()
   target = Concat <axis = 0> (bu, m1, one)
   n = Shape (target)
   ones = ConstantOfShape <value = int64[1] {1}> (n)
   neg = Constant <value = int64 {-1}> ()
   minus = Mul (ones, neg)
   is_minus = Equal (target, minus)
   fixed = Where (is_minus, ones, target)
   y = Expand (freq, fixed)
}
"""


def test_expand_with_minus_one_through_equal_and_where() -> None:
    types = types_of(EXPAND_MINUS_ONE)
    assert types["is_minus"] == "bool[3]"
    assert types["fixed"] == "int64[3]"
    assert types["y"] == "float[batch_size, 8, 1]"


# optimum's causal mask: the Expand target holds `past_sequence_length + sequence_length`, a symbol sum no peer
# compares with -1 unless it knows dims are never negative
CAUSAL_MASK = """
g (int64[batch_size, sequence_length] input_ids, float[batch_size, 2, past_sequence_length, 16] past,
   bool[1, 1, sequence_length, 1] causal) => (bool[?, ?, ?, ?] y) {
   s = Shape (input_ids)
   i0 = Constant <value = int64 {0}> ()
   i1 = Constant <value = int64 {1}> ()
   i2 = Constant <value = int64 {2}> ()
   ax = Constant <value = int64[1] {0}> ()
   b = Gather <axis = 0> (s, i0)
   t = Gather <axis = 0> (s, i1)
   ps = Shape (past)
   p = Gather <axis = 0> (ps, i2)
   total = Add (p, t)
   bu = Unsqueeze (b, ax)
   tu = Unsqueeze (t, ax)
   totu = Unsqueeze (total, ax)
   m1 = Constant <value = int64[1] {-1}> ()
   target = Concat <axis = 0> (bu, m1, tu, totu)
   n = Shape (target)
   ones = ConstantOfShape <value = int64[1] {1}> (n)
   neg = Constant <value = int64 {-1}> ()
   minus = Mul (ones, neg)
   is_minus = Equal (target, minus)
   fixed = Where (is_minus, ones, target)
   y = Expand (causal, fixed)
}
"""


def test_causal_mask_expand_with_symbol_sums() -> None:
    types = types_of(CAUSAL_MASK)
    assert types["y"] == "bool[batch_size, 1, sequence_length, past_sequence_length + sequence_length]"


def test_comparisons_of_shape_values_are_proved_not_guessed() -> None:
    types = types_of("""
g (float[N, M] x) => (float[?, ?] y, float[?, ?] z, float[?, ?] w) {
   s = Shape (x)
   zero = Constant <value = int64[2] {0, 0}> ()
   pos = Greater (s, zero)
   nonneg = GreaterOrEqual (s, zero)
   neg = Not (nonneg)
   a = Constant <value = int64[2] {1, 1}> ()
   ty = Where (pos, s, a)
   tz = Where (nonneg, s, a)
   tw = Where (neg, a, s)
   y = Reshape (x, ty)
   z = Reshape (x, tz)
   w = Reshape (x, tw)
}
""")
    # a dim may be 0: N > 0 is not known, so ty stays open; N >= 0 always holds
    assert types["y"] == "float[?, ?]"
    assert types["z"] == "float[N, M]"
    assert types["w"] == "float[N, M]"


# ---------------------------------------------------------------- broadcasting a dim with its clamped self
# BERT's position embeddings: `position_ids[:, :seq]` of a [1, 128] buffer has min(128, seq) columns, which
# broadcasts with seq only where the two are equal (a valid model never has seq > 128 there)
POSITION_EMBEDDINGS = """
g (int64[batch_size, sequence_length] input_ids, float[256, 32] words, float[128, 32] positions) =>
  (float[?, ?, 32] y) {
   buffer = Constant <value = int64[1, 128] {
     0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
     30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57,
     58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85,
     86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110,
     111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127}> ()
   s = Shape (input_ids)
   i1 = Constant <value = int64 {1}> ()
   t = Gather <axis = 0> (s, i1)
   ax = Constant <value = int64[1] {0}> ()
   end = Unsqueeze (t, ax)
   start = Constant <value = int64[1] {0}> ()
   axis = Constant <value = int64[1] {1}> ()
   step = Constant <value = int64[1] {1}> ()
   ids = Slice (buffer, start, end, axis, step)
   pos = Gather (positions, ids)
   tok = Gather (words, input_ids)
   y = Add (tok, pos)
}
"""


def test_position_embeddings_broadcast_with_their_clamped_length() -> None:
    types = types_of(POSITION_EMBEDDINGS)
    assert types["pos"] == "float[1, min(128, sequence_length), 32]"
    assert types["y"] == "float[batch_size, sequence_length, 32]"


# wav2vec2's positional convolution drops its last frame (`x[..., :-1]`, max(0, L - 1) frames for a length L
# that may be 0) and is added to a tensor of L - 1 frames: a dim is never negative, so the two are the same
DROPPED_FRAME = """
g (float[batch_size, 4, N] x, float[4, 4, 2] w2, float[4, 4, 4] w4) => (float[?, ?, ?] y) {
   a = Conv <kernel_shape = [2], strides = [2]> (x, w2)
   start = Constant <value = int64[1] {0}> ()
   stop = Constant <value = int64[1] {-1}> ()
   axis = Constant <value = int64[1] {2}> ()
   cut = Slice (a, start, stop, axis)
   b = Conv <kernel_shape = [4], strides = [2]> (x, w4)
   y = Add (b, cut)
}
"""


def test_dropped_frame_broadcasts_with_the_shorter_sequence() -> None:
    types = types_of(DROPPED_FRAME)
    assert types["cut"] == "float[batch_size, 4, max(0, floor(N/2) - 1)]"
    assert types["b"] == "float[batch_size, 4, floor(N/2) - 1]"
    assert types["y"] == "float[batch_size, 4, floor(N/2) - 1]"


def test_clamps_that_do_not_prove_the_broadcast_stay_open() -> None:
    types = types_of("""
g (float[N, 4] x, float[M, 4] z) => (float[?, 4] y, float[?, 4] v) {
   start = Constant <value = int64[1] {0}> ()
   axis = Constant <value = int64[1] {0}> ()
   s = Shape (z)
   i0 = Constant <value = int64 {0}> ()
   m = Gather <axis = 0> (s, i0)
   ax = Constant <value = int64[1] {0}> ()
   end = Unsqueeze (m, ax)
   head = Slice (x, start, end, axis)
   y = Add (x, head)
   v = Add (z, head)
}
""")
    # head has min(M, N) rows: with x's N rows that is N only if M >= 1 (M = 0 gives 0 rows: [N] + [0] is invalid
    # unless N is 1, which gives 0); with z's M rows, min(M, N) = M only if N >= 1
    assert types["head"] == "float[min(M, N), 4]"
    assert types["y"] == "float[?, 4]"
    assert types["v"] == "float[?, 4]"


# ---------------------------------------------------------------- slices counted from the end
# T5's relative attention bias keeps its last `seq` rows: `bias[:, :, -seq:, :]` with seq read from a Shape
T5_BIAS_TAIL = """
g (float[batch_size, L, 32] hidden, float[1, 4, L, L] bias) => (float[?, ?, ?, ?] y, float[?, ?, ?, ?] z) {
   s = Shape (hidden)
   i1 = Constant <value = int64 {1}> ()
   n = Gather <axis = 0> (s, i1)
   m = Neg (n)
   ax = Constant <value = int64[1] {0}> ()
   start = Unsqueeze (m, ax)
   end = Constant <value = int64[1] {9223372036854775807}> ()
   axis = Constant <value = int64[1] {2}> ()
   step = Constant <value = int64[1] {1}> ()
   y = Slice (bias, start, end, axis, step)
   back = Constant <value = int64[1] {-1}> ()
   stop = Constant <value = int64[1] {-9223372036854775807}> ()
   z = Slice (bias, start, stop, axis, back)
}
"""


def test_slice_from_a_negative_symbolic_start() -> None:
    types = types_of(T5_BIAS_TAIL)
    assert types["y"] == "float[1, 4, L, L]"
    assert types["z"] == "float[1, 4, 1, L]"


# ---------------------------------------------------------------- broadcasting proved from "1 only where 1"
# paddle2onnx's FPN (PP-OCR det): a stride-16 map, ceil(H/16) rows, plus a stride-32 map upsampled by 2,
# 2*ceil(H/32) rows. They differ by one where H mod 32 is in 1..16, and then only broadcast if the first is 1;
# the second is even, never 1, so every valid run has 2*ceil(H/32) rows.
FPN_UPSAMPLE = """
g (float[N, 4, H, W] x, float[4, 4, 1, 1] w) => (float[?, ?, ?, ?] y) {
   p = Conv <kernel_shape = [1, 1], strides = [16, 16]> (x, w)
   q = Conv <kernel_shape = [1, 1], strides = [32, 32]> (x, w)
   scales = Constant <value = float[4] {1, 1, 2, 2}> ()
   up = Resize <mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"> (q, , scales)
   y = Add (p, up)
}
"""


def test_fpn_upsample_broadcasts_to_the_even_size() -> None:
    types = types_of(FPN_UPSAMPLE)
    assert types["p"] == "float[N, 4, floor((H + 15)/16), floor((W + 15)/16)]"
    assert types["up"] == "float[N, 4, 2*floor((H + 31)/32), 2*floor((W + 31)/32)]"
    assert types["y"] == "float[N, 4, 2*floor((H + 31)/32), 2*floor((W + 31)/32)]"


def test_broadcast_of_unrelated_or_possibly_one_dims_stays_open() -> None:
    types = types_of("""
g (float[N, 4, H] x, float[4, 4, 1] w) => (float[?, ?, ?] y, float[?, ?, ?] z) {
   p = Conv <kernel_shape = [1], strides = [2]> (x, w)
   q = Conv <kernel_shape = [1], strides = [3]> (x, w)
   y = Add (p, q)
   zero = Constant <value = int64[1] {0}> ()
   one = Constant <value = int64[1] {1}> ()
   axis = Constant <value = int64[1] {2}> ()
   e = Slice (x, zero, one, axis)
   z = Add (e, p)
}
""")
    # ceil(H/2) with ceil(H/3): valid for H <= 4 only, where it is ceil(H/2), but that takes a case analysis on H
    # that broadcasting does not do: left open, not guessed
    assert types["y"] == "float[N, 4, ?]"
    assert types["e"] == "float[N, 4, 1]"
    assert types["z"] == "float[N, 4, floor((H + 1)/2)]"


# ---------------------------------------------------------------- arithmetic on shape values
# pad to a multiple of 8: `(8 - L % 8) % 8` frames more, so the padded length is 8*ceil(L/8)
PAD_TO_MULTIPLE = """
g (float[batch, L] x) => (float[?, ?] y) {
   s = Shape (x)
   i1 = Constant <value = int64 {1}> ()
   n = Gather <axis = 0> (s, i1)
   k = Constant <value = int64 {8}> ()
   r = Mod (n, k)
   gap = Sub (k, r)
   p = Mod (gap, k)
   z = Constant <value = int64[1] {0}> ()
   ax = Constant <value = int64[1] {0}> ()
   pu = Unsqueeze (p, ax)
   pads = Concat <axis = 0> (z, z, z, pu)
   y = Pad (x, pads)
}
"""


def test_pad_to_a_multiple_through_mod() -> None:
    assert types_of(PAD_TO_MULTIPLE)["y"] == "float[batch, 8*floor((L + 7)/8)]"


# the causal mask and position ids of a decoder: ConstantOfShape -> Trilu, Range -> Unsqueeze -> Expand, and a
# Range from past to past + seq
MASK_AND_POSITIONS = """
g (int64[batch, seq] ids, float[batch, 4, past, 8] cache) => (float[?, ?] mask, int64[?, ?] pos, int64[?] steps) {
   s = Shape (ids)
   i0 = Constant <value = int64 {0}> ()
   i1 = Constant <value = int64 {1}> ()
   i2 = Constant <value = int64 {2}> ()
   b = Gather <axis = 0> (s, i0)
   n = Gather <axis = 0> (s, i1)
   cs = Shape (cache)
   p = Gather <axis = 0> (cs, i2)
   ax = Constant <value = int64[1] {0}> ()
   nu = Unsqueeze (n, ax)
   bu = Unsqueeze (b, ax)
   square = Concat <axis = 0> (nu, nu)
   full = ConstantOfShape <value = float[1] {-10000}> (square)
   mask = Trilu <upper = 1> (full, i1)
   r = Range (i0, n, i1)
   ru = Unsqueeze (r, ax)
   bs = Concat <axis = 0> (bu, nu)
   pos = Expand (ru, bs)
   end = Add (p, n)
   steps = Range (p, end, i1)
}
"""


def test_causal_mask_and_position_ids() -> None:
    types = types_of(MASK_AND_POSITIONS)
    assert types["mask"] == "float[seq, seq]"
    assert types["pos"] == "int64[batch, seq]"
    assert types["steps"] == "int64[seq]"


# data-dependent ops whose data is a shape value: ReduceProd of a shape, TopK's k = min(seq, 3), Tile's repeats
DATA_FROM_SHAPES = """
g (float[batch, seq, 16] x) => (float[?] flat, float[?, ?] rows2d, float[?, ?, ?] top, float[?, ?, ?] tiled) {
   s = Shape (x)
   i0 = Constant <value = int64 {0}> ()
   i1 = Constant <value = int64 {1}> ()
   b = Gather <axis = 0> (s, i0)
   n = Gather <axis = 0> (s, i1)
   ax = Constant <value = int64[1] {0}> ()
   numel = ReduceProd <keepdims = 1> (s)
   flat = Reshape (x, numel)
   nu = Unsqueeze (n, ax)
   bu = Unsqueeze (b, ax)
   bn = Concat <axis = 0> (bu, nu)
   rows = ReduceProd <keepdims = 1> (bn)
   m1 = Constant <value = int64[1] {-1}> ()
   shp = Concat <axis = 0> (rows, m1)
   rows2d = Reshape (x, shp)
   three = Constant <value = int64[1] {3}> ()
   k = Min (nu, three)
   top, idx = TopK <axis = 1> (x, k)
   one = Constant <value = int64[1] {1}> ()
   rep = Concat <axis = 0> (one, one, bu)
   tiled = Tile (x, rep)
}
"""


def test_data_dependent_ops_on_shape_values() -> None:
    types = types_of(DATA_FROM_SHAPES)
    assert types["flat"] == "float[16*batch*seq]"
    assert types["rows2d"] == "float[batch*seq, 16]"
    assert types["top"] == "float[batch, min(3, seq), 16]"
    assert types["tiled"] == "float[batch, seq, 16*batch]"


# ---------------------------------------------------------------- control flow with known counts and conditions
# torch.onnx's rank test (`if x.dim() == 3`) and a loop over a dim (`for i in range(x.size(1))`)
CONTROL_FLOW = """
g (float[batch, seq, 16] x) => (float[?, ?] y, float[?, ?, ?] scanned, float[?, ?, ?] last) {
   s = Shape (x)
   rank = Size (s)
   three = Constant <value = int64 {3}> ()
   is3 = Equal (rank, three)
   y = If (is3) <then_branch = t () => (float[?, ?] a) {
       m1 = Constant <value = int64[2] {-1, 16}> ()
       a = Reshape (x, m1)
   }, else_branch = e () => (float[?, ?, ?] b) {
       b = Identity (x)
   }>
   i1 = Constant <value = int64 {1}> ()
   n = Gather <axis = 0> (s, i1)
   go = Constant <value = bool {1}> ()
   last, scanned = Loop (n, go, x) <body = body (int64 i, bool c, float[batch, seq, 16] h) =>
       (bool c_out, float[batch, seq, 16] h_out, float[batch, 16] o) {
      c_out = Identity (c)
      h_out = Relu (h)
      o = Gather <axis = 1> (h, i)
   }>
}
"""


def test_if_on_a_known_rank_and_loop_over_a_dim() -> None:
    types = types_of(CONTROL_FLOW)
    assert types["y"] == "float[batch*seq, 16]"
    assert types["scanned"] == "float[seq, batch, 16]"
    assert types["last"] == "float[batch, seq, 16]"


# ---------------------------------------------------------------- sequences of known length
# torch.split / torch.stack / torch.cat through sequences, as scripted exports write them
SEQUENCES = """
g (float[batch, 6, T] x, float[batch, 2, T] y) => (float[?, ?, ?] third, int64 count, float[?, ?, ?] whole,
   float[?, ?, ?] joined, float[?, ?, ?, ?] stacked, float[?, ?, ?] tail, int64 left) {
   parts = SplitToSequence <axis = 1> (x)
   i2 = Constant <value = int64 {2}> ()
   third = SequenceAt (parts, i2)
   count = SequenceLength (parts)
   whole = ConcatFromSequence <axis = 1> (parts)
   sizes = Constant <value = int64[2] {2, 4}> ()
   halves = SplitToSequence <axis = 1> (x, sizes)
   more = SequenceInsert (halves, y)
   joined = ConcatFromSequence <axis = 1> (more)
   pair = SequenceConstruct (x, x)
   stacked = ConcatFromSequence <axis = 0, new_axis = 1> (pair)
   m1 = Constant <value = int64 {-1}> ()
   tail = SequenceAt (more, m1)
   fewer = SequenceErase (more)
   left = SequenceLength (fewer)
}
"""


def test_sequences_of_known_length() -> None:
    types = types_of(SEQUENCES)
    assert types["parts"] == "seq(float[batch, 1, T])"
    assert types["third"] == "float[batch, 1, T]"
    assert types["whole"] == "float[batch, 6, T]"
    assert types["more"] == "seq(float[batch, ?, T])"
    assert types["joined"] == "float[batch, 8, T]"
    assert types["stacked"] == "float[2, batch, 6, T]"
    assert types["tail"] == "float[batch, 2, T]"
    assert types["fewer"] == "seq(float[batch, ?, T])"


def test_sequence_lengths_are_shape_values() -> None:
    types = types_of("""
g (float[batch, 6, T] x) => (float[?, ?] y) {
   parts = SplitToSequence <axis = 1> (x)
   n = SequenceLength (parts)
   ax = Constant <value = int64[1] {0}> ()
   nu = Unsqueeze (n, ax)
   m1 = Constant <value = int64[1] {-1}> ()
   shp = Concat <axis = 0> (nu, m1)
   y = Reshape (x, shp)
}
""")
    assert types["y"] == "float[6, T*batch]"


def test_sequence_of_unknown_length() -> None:
    types = types_of("""
g (float[batch, N, T] x) => (float[?, ?, ?] one, int64 n) {
   parts = SplitToSequence <axis = 1> (x)
   i = Constant <value = int64 {0}> ()
   one = SequenceAt (parts, i)
   n = SequenceLength (parts)
}
""")
    assert types["one"] == "float[batch, 1, T]"
    assert types["n"] == "int64"


# ---------------------------------------------------------------- sklearn pipelines (skl2onnx)
SKLEARN = """<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 1]>
g (float[N, 4] X) => (int64[?] label, seq(map(int64, float)) probs, float[?, ?] reg) {
   scaled = ai.onnx.ml.Scaler <offset = [0.0, 0.0, 0.0, 0.0], scale = [1.0, 1.0, 1.0, 1.0]> (X)
   label, scores = ai.onnx.ml.LinearClassifier <classlabels_ints = [0, 1, 2], coefficients = [
     0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.3, 0.3, 0.3, 0.3], intercepts = [0.0, 0.0, 0.0],
     multi_class = 1, post_transform = "SOFTMAX"> (scaled)
   normed = ai.onnx.ml.Normalizer <norm = "L1"> (scores)
   probs = ai.onnx.ml.ZipMap <classlabels_int64s = [0, 1, 2]> (normed)
   reg = ai.onnx.ml.LinearRegressor <coefficients = [0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2], targets = 2> (X)
}
"""


def test_sklearn_pipeline_ops() -> None:
    types, findings = infer(SKLEARN)
    assert findings == [], [(f.code, f.message) for f in findings]
    assert types["scaled"] == "float[N, 4]"
    assert (types["label"], types["scores"]) == ("int64[N]", "float[N, 3]")
    assert types["normed"] == "float[N, 3]"
    assert types["probs"] == "seq(map(int64, float))"
    assert types["reg"] == "float[N, 2]"


def test_element_pairs_follow_broadcasting_not_flattening() -> None:
    types = types_of("""
g (float[63] z) => (float[?, ?] y) {
   a = Constant <value = int64[2, 1] {2, 3}> ()
   b = Constant <value = int64[1, 2] {5, 7}> ()
   c = Add (a, b)
   f = Constant <value = int64[1] {-1}> ()
   flat = Reshape (c, f)
   s = Constant <value = int64[1] {0}> ()
   e = Constant <value = int64[1] {2}> ()
   first = Slice (flat, s, e)
   y = Reshape (z, first)
}
""")
    # c is [[7, 9], [8, 10]]: pairing the two inputs' elements in order would give [7, 10]
    assert types["c"] == "int64[2, 2]"
    assert types["y"] in ("float[?, ?]", "float[7, 9]")
