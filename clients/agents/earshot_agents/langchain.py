"""LangChain integration: `EarshotRetriever`, a `langchain_core` `BaseRetriever` whose documents
are the sealed context Earshot assembles for one container (only admissible items are ever
ranked), and `EarshotRememberTool`, a tool that records an item with its origin audience bound to
who was present. Both call the API through earshot_agents.client.

    retriever = EarshotRetriever(client=EarshotHTTP(url, token), store="demo",
                                 container=Container(owner="owner", participants=["bob"]),
                                 ranking="hybrid", embed=my_embedding_fn, k=4)
    docs = retriever.invoke("where is the offsite?")   # or await retriever.ainvoke(...)

Each document's `metadata` carries the decision (`item`, `reason`, `basis`, `role`, `grant`,
`rank`, `score`, …) and the context's `attempt`, `revision`, `ranking` and `resolved`; when the
container is unresolved also `unresolved_reason` (and a warning is logged): only public items
came back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, model_validator

from earshot_agents.client import Container, Context, EarshotAPIError, EarshotHTTP, item_request
from earshot_agents.embeddings import EmbeddingFn


def documents(context: Context) -> list[Document]:
    """The context's items as LangChain documents, in rank order."""
    shared = context.shared_metadata()
    return [Document(id=i.item, page_content=i.content, metadata={**i.metadata(), **shared}) for i in context.items]


class EarshotRetriever(BaseRetriever):
    """Retrieves through Earshot's context assembly for one container: authorization before
    ranking, so a forbidden item can neither appear nor take a slot. `ranking` is `bm25` (default),
    `dense` or `hybrid`; the last two need `embed` (the query's embedding function, the same model
    that embedded the items). `owners` searches other owners' memories (default: the container's
    owner). An error answer raises `EarshotAPIError` with the API's code."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: EarshotHTTP
    store: str
    container: Container
    ranking: Literal["bm25", "dense", "hybrid"] = "bm25"
    embed: EmbeddingFn | None = None
    k: int = 5
    fetch: int | None = None
    owners: Sequence[str] | None = None

    @model_validator(mode="after")
    def _ranking_inputs(self) -> EarshotRetriever:
        if self.ranking in ("dense", "hybrid") and self.embed is None:
            raise ValueError(f"ranking {self.ranking!r} needs an embedding function (embed=...)")
        return self

    def _arguments(self, query: str) -> dict[str, Any]:
        return {
            "query": None if self.ranking == "dense" else query,
            "ranking": self.ranking,
            "query_embedding": self.embed(query) if self.embed is not None and self.ranking != "bm25" else None,
            "k": self.k,
            "fetch": self.fetch,
            "owners": self.owners,
        }

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return documents(self.client.assemble_context(self.store, self.container, **self._arguments(query)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return documents(await self.client.aassemble_context(self.store, self.container, **self._arguments(query)))


class RememberContent(BaseModel):
    """What the model gives when the tool is bound to the conversation (`present`)."""

    content: str = Field(description="What to remember, at most 65536 bytes. Never changes who may see it.")


class RememberInput(RememberContent):
    """What the model gives when the tool is not bound to a conversation: who was present."""

    participants: list[str] | None = Field(
        default=None, description="Participant ids present when it was said (the owner is always one)."
    )
    visibility: Literal["public", "owner_private"] | None = Field(
        default=None, description="Instead of participants: `public`, or `owner_private` (the owner alone)."
    )


class EarshotRememberTool(BaseTool):
    """Records an item in `owner`'s memory (`POST /items`, admin scope) with its origin audience
    bound now. Bound to the conversation (`present`, a `Container`), the audience is its viewers
    and the model gives only `content`; unbound, the model says who was present (`participants`)
    or a `visibility`. A refusal (e.g. `origin_unresolved`) raises `ToolException` whose
    `__cause__` is the `EarshotAPIError`; set `handle_tool_error=True` to hand it to the model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "remember"
    description: str = (
        "Remember something said in this conversation. Only the people present when it was said "
        "(its audience) will ever be shown it again."
    )
    client: EarshotHTTP
    store: str
    owner: str
    present: Container | None = None
    embed: EmbeddingFn | None = None
    author: str | None = None

    @model_validator(mode="after")
    def _schema(self) -> EarshotRememberTool:
        self.args_schema = RememberContent if self.present is not None else RememberInput
        if self.present is not None and self.present.owner != self.owner:
            raise ValueError("present.owner must be the tool's owner")
        return self

    def _body(
        self, content: str, participants: list[str] | None = None, visibility: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"owner": self.owner, "content": content, "author": self.author}
        if self.present is not None:
            if self.present.quality not in (None, "fresh"):
                raise ToolException("origin_unresolved: who was present is not known reliably; not recorded")
            if not self.present.participants and not self.present.identities:
                body["visibility"] = "owner_private"  # {owner} alone is the owner_private audience
            body["participants"] = list(self.present.participants) or None
            body["identities"] = list(self.present.identities) or None
        else:
            body["participants"] = participants
            body["visibility"] = visibility
        if self.embed is not None:
            body["embedding"] = list(self.embed(content))
        try:
            item_request(**body)  # refused here, before any call, when the origin is not exactly one way
        except ValueError as e:
            raise ToolException(f"invalid_request: {e}") from e
        return body

    @staticmethod
    def _answer(outcome: dict[str, Any]) -> dict[str, Any]:
        ids = outcome.get("ids") or []
        return {"item": ids[0] if ids else None, "outcome": outcome["outcome"], "revision": outcome["revision"]}

    def _run(self, content: str, participants: list[str] | None = None, visibility: str | None = None) -> Any:
        body = self._body(content, participants, visibility)
        try:
            return self._answer(self.client.remember(self.store, **body))
        except EarshotAPIError as e:
            raise ToolException(f"{e.code}: {e.message}") from e

    async def _arun(self, content: str, participants: list[str] | None = None, visibility: str | None = None) -> Any:
        body = self._body(content, participants, visibility)
        try:
            return self._answer(await self.client.aremember(self.store, **body))
        except EarshotAPIError as e:
            raise ToolException(f"{e.code}: {e.message}") from e
