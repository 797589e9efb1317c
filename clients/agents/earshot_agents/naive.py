"""The ungated baseline, for comparisons only: rank EVERY item (whatever the container may see),
keep the top k, and optionally post-filter with Earshot's decisions afterwards, as the usual
"filter after vector search" RAG guidance does. Used by the tests and examples/agent to show what
the gate changes; never use it to build a context.

`unscoped_top_k` ranks by BM25 (Okapi, k1 = 1.2, b = 0.75, with the statistics of the whole
corpus, as an ungated index has them) or by the dot product of embeddings.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from earshot_agents.client import Container, EarshotHTTP
from earshot_agents.embeddings import EmbeddingFn

_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def bm25_scores(corpus: Mapping[str, str], query: str, k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """BM25 of each document of `corpus` (id -> text) that matches a query word."""
    docs = {i: _words(t) for i, t in corpus.items()}
    n = len(docs)
    if n == 0:
        return {}
    avg = sum(len(d) for d in docs.values()) / n
    df: Counter[str] = Counter()
    for d in docs.values():
        df.update(set(d))
    scores: dict[str, float] = {}
    for i, d in docs.items():
        tf = Counter(d)
        s = 0.0
        for w in set(_words(query)):
            if tf[w] == 0:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
        if s > 0:
            scores[i] = s
    return scores


def unscoped_top_k(
    corpus: Mapping[str, str],
    query: str,
    k: int,
    *,
    embed: EmbeddingFn | None = None,
) -> list[str]:
    """The top `k` item ids over the whole corpus: by BM25, or by embedding similarity when
    `embed` is given. Ties by id."""
    if embed is None:
        scores = bm25_scores(corpus, query)
    else:
        q = list(embed(query))
        scores = {i: sum(a * b for a, b in zip(q, embed(t))) for i, t in corpus.items()}
    return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))][:k]


def post_filter(client: EarshotHTTP, store: str, container: Container, ranked: Sequence[str]) -> list[str]:
    """Keep, in order, the items of `ranked` Earshot admits for `container` (POST /check/bulk):
    the post-filter step. It removes leaks from the list, but cannot give back the slots the
    forbidden items took in the top k."""
    if not ranked:
        return []
    decisions = client.check_bulk(store, container, ranked)
    return [i for i in ranked if decisions[i]["admitted"]]
