"""Tiny Hugging Face transformers models with random weights, shared by the families that export them (optimum,
TorchScript, dynamo, the GenAI builder): the configs, and a model built from one with seeded weights."""
from __future__ import annotations

from . import SEED
from .kit import seed_all


def hf_model(cls_name: str, config):
    import torch
    import transformers

    seed_all()
    model = getattr(transformers, cls_name)(config)
    model.eval()
    with torch.no_grad():  # deterministic, small non-trivial values for every parameter
        g = torch.Generator().manual_seed(SEED)
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    return model




def bert_config():
    from transformers import BertConfig

    return BertConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=128, type_vocab_size=4)


def gpt2_config():
    from transformers import GPT2Config

    return GPT2Config(vocab_size=256, n_embd=32, n_layer=2, n_head=4, n_positions=128, n_inner=64,
                      bos_token_id=0, eos_token_id=1)


def decoder_kw():
    return dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=True)
