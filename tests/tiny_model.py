"""A tiny random-weight Llama on the real SmolLM2 tokenizer, for fast generation tests.

Validity must hold whatever the weights, so random ones are a fair test — but a
random model almost never picks the one token that closes a string among 49k, so
its outputs would rarely finish. ``closing_bias`` makes the output-layer rows of
closing punctuation and digits larger, so they win often when the mask allows them:
the outputs end in tens of tokens, and they are still arbitrary.
"""

from __future__ import annotations

from typing import Any

CLOSERS = ['"', "}", "]", ",", "0", "1", "5", "9", "true", "null"]


def tiny_shape(tokenizer: Any) -> dict[str, Any]:
    """The tiny models' size (two layers of 64), on ``tokenizer``'s vocabulary and
    special tokens: a transformers config's arguments, whatever the architecture."""
    return dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )


def tiny_model(tokenizer: Any, seed: int = 0, closing_bias: float = 6.0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(**tiny_shape(tokenizer))
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        for text in CLOSERS:
            for token_id in tokenizer.encode(text, add_special_tokens=False):
                head[token_id] *= closing_bias
        for token_id in tokenizer.all_special_ids:
            head[token_id] *= closing_bias
    return model
