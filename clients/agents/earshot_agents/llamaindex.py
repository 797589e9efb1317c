"""LlamaIndex integration: `EarshotLlamaRetriever`, a `llama_index.core` `BaseRetriever` whose
nodes are the sealed context Earshot assembles for one container (only admissible items are ever
ranked). It plugs into a `RetrieverQueryEngine` like any retriever. Calls the API through
earshot_agents.client.

    retriever = EarshotLlamaRetriever(EarshotHTTP(url, token), "demo",
                                      Container(owner="owner", participants=["bob"]),
                                      ranking="dense", embed=my_embedding_fn)
    nodes = retriever.retrieve("where is the offsite?")   # or await retriever.aretrieve(...)

Each node is a `TextNode` whose id is the item id and whose `metadata` carries the decision
(`item`, `reason`, `basis`, `role`, `grant`, `rank`, …) and the context's `attempt`, `revision`,
`ranking` and `resolved` (plus `unresolved_reason` when the container did not resolve: only
public items came back, and a warning is logged). A `QueryBundle` that already has an
`embedding` is used as the query embedding; otherwise `embed` makes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from earshot_agents.client import RANKINGS, Container, Context, EarshotHTTP
from earshot_agents.embeddings import EmbeddingFn


def nodes(context: Context) -> list[NodeWithScore]:
    """The context's items as scored nodes, in rank order. The decision metadata is kept out of
    the text the LLM sees (`excluded_llm_metadata_keys`) but stays on the node."""
    shared = context.shared_metadata()
    out = []
    for i in context.items:
        metadata = {**i.metadata(), **shared}
        node = TextNode(
            id_=i.item,
            text=i.content,
            metadata=metadata,
            excluded_llm_metadata_keys=list(metadata),
            excluded_embed_metadata_keys=list(metadata),
        )
        out.append(NodeWithScore(node=node, score=i.score))
    return out


class EarshotLlamaRetriever(BaseRetriever):
    """Retrieves through Earshot's context assembly for one container. `ranking` is `bm25`
    (default), `dense` or `hybrid`; the last two need `embed` (or a `QueryBundle` with an
    `embedding`). An error answer raises `EarshotAPIError` with the API's code."""

    def __init__(
        self,
        client: EarshotHTTP,
        store: str,
        container: Container,
        *,
        ranking: str = "bm25",
        embed: EmbeddingFn | None = None,
        k: int = 5,
        fetch: int | None = None,
        owners: Sequence[str] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {RANKINGS}, not {ranking!r}")
        self.client = client
        self.store = store
        self.container = container
        self.ranking = ranking
        self.embed = embed
        self.k = k
        self.fetch = fetch
        self.owners = owners
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _arguments(self, query_bundle: QueryBundle) -> dict[str, Any]:
        embedding: Sequence[float] | None = None
        if self.ranking != "bm25":
            if query_bundle.embedding is not None:
                embedding = query_bundle.embedding
            elif self.embed is not None:
                embedding = self.embed(query_bundle.query_str)
            else:
                raise ValueError(f"ranking {self.ranking!r} needs an embedding function (embed=...)")
        return {
            "query": None if self.ranking == "dense" else query_bundle.query_str,
            "ranking": self.ranking,
            "query_embedding": embedding,
            "k": self.k,
            "fetch": self.fetch,
            "owners": self.owners,
        }

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes(self.client.assemble_context(self.store, self.container, **self._arguments(query_bundle)))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        context = await self.client.aassemble_context(self.store, self.container, **self._arguments(query_bundle))
        return nodes(context)
