"""optimum (Hugging Face) exports: `main_export` of tiny encoder, decoder-with-past, seq2seq, speech and vision
models; input dims that only run at one value are pinned after export."""
from __future__ import annotations

import os

from .kit import Ctx, inline_external_data, versions
from .registry import target
from .tiny_hf import bert_config, decoder_kw, gpt2_config, hf_model


def pin_input_dims(path: str, pin: dict[str, dict[int, int]]) -> str:
    """Replace the dim_params of graph inputs that the model can only run with one value (the exporter
    declares them symbolic, but e.g. position embeddings fix them). Returns a note, '' if nothing changed."""
    import onnx

    m = onnx.load(path)
    done = []
    for vi in m.graph.input:
        for axis, value in pin.get(vi.name, {}).items():
            d = vi.type.tensor_type.shape.dim[axis]
            if d.HasField("dim_param"):
                done.append(f"{vi.name}[{axis}] `{d.dim_param}`={value}")
                d.Clear()
                d.dim_value = value
    if done:
        onnx.save(m, path)
    return ("input dims pinned (the model runs only with these): " + ", ".join(done)) if done else ""


def optimum_export(ctx: Ctx, prefix: str, model, task: str, notes: dict[str, str] | None = None,
                   pin: dict[str, dict[int, int]] | None = None, **kw):
    from optimum.exporters.onnx import main_export

    src = os.path.join(ctx.tmp, prefix + "-src")
    out = os.path.join(ctx.tmp, prefix + "-onnx")
    model.save_pretrained(src)
    main_export(src, output=out, task=task, device="cpu", do_validation=False, **kw)
    files = sorted(f for f in os.listdir(out) if f.endswith(".onnx"))
    if not files:
        raise RuntimeError(f"optimum wrote no .onnx file: {os.listdir(out)}")
    for f in files:
        stem = f[:-5]
        name = prefix + ".onnx" if stem == "model" else f"{prefix}__{stem}.onnx"
        inline_external_data(os.path.join(out, f), ctx.path(name))
        note = (notes or {}).get(stem, "")
        pinned = pin_input_dims(ctx.path(name), pin) if pin else ""
        ctx.file(name, "; ".join(x for x in (note, pinned) if x), task=task)
    ctx.exporter("optimum-onnx main_export (" + versions("optimum-onnx", "optimum", "transformers", "torch") + ")")


@target("optimum-bert", "bert", "optimum", "encoder, feature-extraction (input_ids, attention_mask, token_type_ids)")
def t_optimum_bert(ctx):
    optimum_export(ctx, "optimum_bert", hf_model("BertModel", bert_config()), "feature-extraction")


@target("optimum-roberta", "roberta", "optimum", "encoder, feature-extraction; positions from the padding mask")
def t_optimum_roberta(ctx):
    from transformers import RobertaConfig

    cfg = RobertaConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=66, type_vocab_size=1, pad_token_id=1)
    optimum_export(ctx, "optimum_roberta", hf_model("RobertaModel", cfg), "feature-extraction")


@target("optimum-gpt2", "gpt2", "optimum", "decoder with past key values (text-generation-with-past)")
def t_optimum_gpt2(ctx):
    optimum_export(ctx, "optimum_gpt2", hf_model("GPT2LMHeadModel", gpt2_config()), "text-generation-with-past")


@target("optimum-llama", "llama", "optimum", "decoder with past, GQA (4 heads, 2 kv heads), rotary")
def t_optimum_llama(ctx):
    from transformers import LlamaConfig

    optimum_export(ctx, "optimum_llama", hf_model("LlamaForCausalLM", LlamaConfig(**decoder_kw())),
                   "text-generation-with-past")


@target("optimum-qwen2", "qwen2", "optimum", "decoder with past, GQA, qkv bias")
def t_optimum_qwen2(ctx):
    from transformers import Qwen2Config

    optimum_export(ctx, "optimum_qwen2", hf_model("Qwen2ForCausalLM", Qwen2Config(**decoder_kw())),
                   "text-generation-with-past")


@target("optimum-mistral", "mistral", "optimum", "decoder with past, GQA, sliding window")
def t_optimum_mistral(ctx):
    from transformers import MistralConfig

    optimum_export(ctx, "optimum_mistral",
                   hf_model("MistralForCausalLM", MistralConfig(**decoder_kw(), sliding_window=64)),
                   "text-generation-with-past")


@target("optimum-phi3", "phi3", "optimum", "decoder with past, fused qkv / gate_up projections")
def t_optimum_phi3(ctx):
    from transformers import Phi3Config

    optimum_export(ctx, "optimum_phi3", hf_model("Phi3ForCausalLM", Phi3Config(**decoder_kw())),
                   "text-generation-with-past")


_SEQ2SEQ_NOTES = {
    "encoder_model": "encoder",
    "decoder_model": "decoder, first step (no past)",
    "decoder_with_past_model": "decoder step with past key values",
    "decoder_model_merged": "merged decoder: If on use_cache_branch",
}


@target("optimum-t5", "t5", "optimum", "encoder + decoders with past (text2text-generation-with-past)")
def t_optimum_t5(ctx):
    from transformers import T5Config

    cfg = T5Config(vocab_size=256, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                   relative_attention_num_buckets=8, relative_attention_max_distance=32,
                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    optimum_export(ctx, "optimum_t5", hf_model("T5ForConditionalGeneration", cfg), "text2text-generation-with-past",
                   _SEQ2SEQ_NOTES)


@target("optimum-bart", "bart", "optimum", "encoder + decoders with past (text2text-generation-with-past)")
def t_optimum_bart(ctx):
    from transformers import BartConfig

    cfg = BartConfig(vocab_size=256, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
                     pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                     forced_bos_token_id=None, forced_eos_token_id=None)
    optimum_export(ctx, "optimum_bart", hf_model("BartForConditionalGeneration", cfg),
                   "text2text-generation-with-past", _SEQ2SEQ_NOTES)


@target("optimum-whisper", "whisper", "optimum", "speech seq2seq: conv encoder + decoders with past")
def t_optimum_whisper(ctx):
    from transformers import WhisperConfig

    cfg = WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_source_positions=32, max_target_positions=64, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2, decoder_start_token_id=3, suppress_tokens=[], begin_suppress_tokens=[])
    optimum_export(ctx, "optimum_whisper", hf_model("WhisperForConditionalGeneration", cfg),
                   "automatic-speech-recognition-with-past", _SEQ2SEQ_NOTES, pin={"input_features": {1: 16, 2: 64}},
                   nb_max_frames=64)


@target("optimum-vit", "vit", "optimum", "image classification, patch embedding Conv, 32x32 input")
def t_optimum_vit(ctx):
    from transformers import ViTConfig

    cfg = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=64, num_labels=5)
    optimum_export(ctx, "optimum_vit", hf_model("ViTForImageClassification", cfg), "image-classification",
                   pin={"pixel_values": {1: 3, 2: 32, 3: 32}}, height=32, width=32)


@target("optimum-clip", "clip", "optimum", "text + vision towers, zero-shot image classification")
def t_optimum_clip(ctx):
    from transformers import CLIPConfig

    cfg = CLIPConfig(
        text_config=dict(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=32, bos_token_id=0, eos_token_id=1,
                         pad_token_id=1),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4),
        projection_dim=32)
    optimum_export(ctx, "optimum_clip", hf_model("CLIPModel", cfg), "zero-shot-image-classification",
                   pin={"pixel_values": {1: 3, 2: 32, 3: 32}}, height=32, width=32)


@target("optimum-wav2vec2", "wav2vec2", "optimum", "CTC speech model: conv feature extractor, grouped pos-conv")
def t_optimum_wav2vec2(ctx):
    from transformers import Wav2Vec2Config

    cfg = Wav2Vec2Config(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, do_stable_layer_norm=False,
                         feat_extract_norm="group", pad_token_id=0)
    optimum_export(ctx, "optimum_wav2vec2", hf_model("Wav2Vec2ForCTC", cfg), "automatic-speech-recognition")
