"""Embedding functions for `query_embedding` (and item embeddings): the `EmbeddingFn` type a
retriever takes, an adapter from any LangChain `Embeddings`, and `hashed_bow_embedding`, a
model-free stand-in (the same construction as `earshot eval`'s, crates/earshot-eval/src/gen.rs)
for tests and examples. It is NOT a language model: texts that share words point the same way,
nothing else is learnt. Use a real embedding model in production, the same one for items and
queries.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

EmbeddingFn = Callable[[str], Sequence[float]]
"""Turns a text into one embedding, in the store's dimension."""

DIMENSION = 64
_MASK = (1 << 64) - 1
_WORD = re.compile(r"[^\W_]+")


def hashed_bow_embedding(text: str, dimension: int = DIMENSION) -> list[float]:
    """A deterministic embedding with no model: each distinct lower-cased word a fixed
    pseudo-random ±1 vector from its FNV-1a hash (xorshift64, one bit per dimension), summed over
    the words and normalised. A text with no word gets a fixed direction."""
    v = [0.0] * dimension
    for word in _WORD.findall(text):
        h = 0xCBF29CE484222325
        for b in word.lower().encode():
            h = ((h ^ b) * 0x00000100000001B3) & _MASK
        for i in range(dimension):
            h ^= (h << 13) & _MASK
            h ^= h >> 7
            h ^= (h << 17) & _MASK
            v[i] += 1.0 if h & 1 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0.0:
        return [1.0] + [0.0] * (dimension - 1)
    return [x / norm for x in v]


def from_langchain(embeddings: Any) -> EmbeddingFn:
    """An `EmbeddingFn` from a LangChain `Embeddings` (its `embed_query`)."""
    return lambda text: embeddings.embed_query(text)
