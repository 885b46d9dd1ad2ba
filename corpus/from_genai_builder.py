"""onnxruntime-genai's model builder: int4 CPU decoders (MatMulNBits, GroupQueryAttention ...) from tiny
transformers checkpoints, external data kept beside each model."""
from __future__ import annotations

import os
import sys

from .kit import versions
from .registry import target
from .tiny_hf import decoder_kw, hf_model


def _tiny_tokenizer(path: str, vocab_size: int):
    """A word-level tokenizer of `vocab_size` tokens: the builder reads one from the model folder (offline)."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab_size)}, unk_token="t0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0", bos_token="t1",
                                                eos_token="t2", pad_token="t0")
    fast.save_pretrained(path)


def _genai_oracle_dims(path: str) -> str:
    """GroupQueryAttention on CPU runs a prompt after a past only at batch 1, and reads the total length from the
    attention mask: pin batch_size to 1 and say that the mask is past + new tokens long, so that feeds made from
    the input symbols (the validation here, the shared oracle) are ones the model accepts."""
    import onnx

    m = onnx.load(path, load_external_data=False)
    for vi in m.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].dim_param == "batch_size":
            dims[0].Clear()
            dims[0].dim_value = 1
        if vi.name == "attention_mask" and len(dims) == 2 and dims[1].dim_param == "total_sequence_length":
            dims[1].dim_param = "past_sequence_length + sequence_length"
    onnx.save(m, path)
    return ("input dims pinned for runs: batch_size=1, attention_mask[1] `total_sequence_length` = "
            "`past_sequence_length + sequence_length`")


@target("genai-builder", "llama/qwen2/phi3", "onnxruntime-genai model builder",
        "int4 CPU decoders (MatMulNBits, GroupQueryAttention, SkipSimplifiedLayerNormalization, rotary caches), "
        "external data kept beside the model")
def t_genai(ctx):
    import runpy

    import onnx
    import transformers

    for arch, cls, config, extra in [
            ("llama", "LlamaForCausalLM", transformers.LlamaConfig, {}),
            ("qwen2", "Qwen2ForCausalLM", transformers.Qwen2Config, {}),
            # Phi-3 mini (one rotary cache): the builder takes LongRoPE when the two lengths differ
            ("phi3", "Phi3ForCausalLM", transformers.Phi3Config, {"original_max_position_embeddings": 128})]:
        kw = {**decoder_kw(), **extra}
        src, out = os.path.join(ctx.tmp, arch + "-src"), os.path.join(ctx.tmp, arch + "-onnx")
        hf_model(cls, config(**kw)).save_pretrained(src)
        _tiny_tokenizer(src, kw["vocab_size"])
        argv = sys.argv
        sys.argv = ["builder", "-i", src, "-o", out, "-p", "int4", "-e", "cpu", "-c", os.path.join(ctx.tmp, "cache")]
        try:
            runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__")
        finally:
            sys.argv = argv
        name = f"genai_{arch}_int4.onnx"
        m = onnx.load(os.path.join(out, "model.onnx"), load_external_data=True)
        onnx.save(m, ctx.path(name), save_as_external_data=True, all_tensors_to_one_file=True,
                  location=name + ".data", size_threshold=1024)
        ctx.file(name, _genai_oracle_dims(ctx.path(name)), data=name + ".data")
    ctx.exporter("onnxruntime_genai.models.builder (" + versions("onnxruntime-genai", "transformers", "torch") + ")")
