"""The one place earshot_agents talks HTTP: a small sync and async client over `httpx` for the
calls the retrievers and tools make (context assembly through an attempt, recording an item, the
bulk check used by post-filter comparisons, and the set-up calls examples need), and the typed
`EarshotAPIError` every failure raises, carrying the API's stable error code.

Context assembly is the API's documented two-step flow (docs/RULES.md §4, api/openapi.json):
`POST /v1/stores/{store}/attempts` pins a snapshot and the container, then
`POST /v1/stores/{store}/attempts/{attempt}/context` ranks only that container's admissible items
and seals the context. There is no one-shot endpoint; `assemble_context` does both.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx

logger = logging.getLogger("earshot_agents")

Ranking = Literal["bm25", "dense", "hybrid"]
Quality = Literal["fresh", "stale", "low_confidence", "conflicting"]
RANKINGS: tuple[str, ...] = ("bm25", "dense", "hybrid")

UNAVAILABLE = "unavailable"
"""`EarshotAPIError.code` when the service could not be reached (as `earshot mcp` reports it)."""
UNEXPECTED_RESPONSE = "unexpected_response"
"""`EarshotAPIError.code` of an answer that is not the service's error body (a proxy's page, …)."""


class EarshotAPIError(Exception):
    """An error answer of the API: its stable `code` (e.g. `store_not_found`,
    `embedding_dimension_mismatch`, `origin_unresolved`; see `x-error-codes` in api/openapi.json),
    the human-readable `message`, the structured `details` and the HTTP `status` (0 when the
    service could not be reached: code `unavailable`)."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None, status: int = 0) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.code = code
        self.message = message
        self.details = dict(details or {})
        self.status = status

    @classmethod
    def from_response(cls, response: httpx.Response) -> EarshotAPIError:
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            return cls(
                UNEXPECTED_RESPONSE, f"not an Earshot error body: {response.text[:200]!r}", {}, response.status_code
            )
        message = error.get("message")
        details = error.get("details")
        return cls(
            error["code"],
            message if isinstance(message, str) else "",
            details if isinstance(details, dict) else {},
            response.status_code,
        )


@dataclass(frozen=True)
class Container:
    """Who is present now (docs/RULES.md §1.2): the acting `owner` and the viewers, as participant
    ids and/or transport identities (`(transport, identifier)` pairs or `{"transport",
    "identifier"}` dicts), with an evidence `quality`. Anything that does not resolve, or a quality
    that is not `fresh`, makes the container unresolved: it is then admitted public items only."""

    owner: str
    participants: Sequence[str] = ()
    identities: Sequence[tuple[str, str] | Mapping[str, str]] = ()
    quality: Quality | None = None

    def to_json(self) -> dict[str, Any]:
        viewers: dict[str, Any] = {}
        if self.participants:
            viewers["participants"] = list(self.participants)
        if self.identities:
            viewers["identities"] = [_identity(i) for i in self.identities]
        if self.quality is not None:
            viewers["quality"] = self.quality
        body: dict[str, Any] = {"owner": self.owner}
        if viewers:
            body["viewers"] = viewers
        return body


def _identity(i: tuple[str, str] | Mapping[str, str]) -> dict[str, str]:
    if isinstance(i, Mapping):
        return {"transport": i["transport"], "identifier": i["identifier"]}
    transport, identifier = i
    return {"transport": transport, "identifier": identifier}


@dataclass(frozen=True)
class ContextItem:
    """One admitted item of a sealed context, with its decision."""

    item: str
    rank: int
    score: float
    reason: str
    basis: str
    content: str
    role: str | None = None
    grant: str | None = None
    author: str | None = None
    data_reason: str | None = None
    digest: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The decision as flat metadata (None fields left out)."""
        m: dict[str, Any] = {
            "item": self.item,
            "rank": self.rank,
            "score": self.score,
            "reason": self.reason,
            "basis": self.basis,
            "role": self.role,
            "grant": self.grant,
            "author": self.author,
            "data_reason": self.data_reason,
            "digest": self.digest,
        }
        return {k: v for k, v in m.items() if v is not None}


@dataclass(frozen=True)
class Context:
    """A sealed context: the admitted items in rank order and how the container resolved."""

    attempt: str
    revision: int
    resolved: bool
    resolution: dict[str, Any]
    ranking: str
    candidates: int
    items: list[ContextItem] = field(default_factory=list)

    @property
    def unresolved_reason(self) -> str | None:
        """Why the container did not resolve (`unknown_identity`, …), None when it did."""
        return None if self.resolved else self.resolution.get("reason", "unresolved")

    def shared_metadata(self) -> dict[str, Any]:
        """What every document or node of this context carries besides its own decision."""
        m: dict[str, Any] = {
            "attempt": self.attempt,
            "revision": self.revision,
            "ranking": self.ranking,
            "resolved": self.resolved,
        }
        if not self.resolved:
            m["unresolved_reason"] = self.unresolved_reason
            if "detail" in self.resolution:
                m["unresolved_detail"] = self.resolution["detail"]
        return m


def _context(body: Mapping[str, Any]) -> Context:
    items = [
        ContextItem(
            item=i["item"],
            rank=int(i["rank"]),
            score=float(i["score"]),
            reason=i["reason"],
            basis=i["basis"],
            content=i.get("content") or "",
            role=i.get("role"),
            grant=i.get("grant"),
            author=i.get("author"),
            data_reason=i.get("data_reason"),
            digest=i.get("digest"),
        )
        for i in body.get("items", [])
    ]
    resolution = dict(body.get("resolution") or {"resolved": bool(body.get("resolved"))})
    context = Context(
        attempt=body["attempt"],
        revision=int(body["revision"]),
        resolved=bool(body["resolved"]),
        resolution=resolution,
        ranking=body.get("ranking", "bm25"),
        candidates=int(body.get("candidates", 0)),
        items=items,
    )
    if not context.resolved:
        # Fail closed, and say so: only public items were admissible.
        logger.warning(
            "earshot: container unresolved (%s%s): only public items are admissible",
            context.unresolved_reason,
            f", {resolution['detail']}" if "detail" in resolution else "",
        )
    return context


def context_request(
    query: str | None,
    *,
    ranking: str | None,
    query_embedding: Sequence[float] | None,
    k: int | None,
    fetch: int | None,
    owners: Sequence[str] | None,
) -> dict[str, Any]:
    """The body of `POST /attempts/{a}/context`: only the inputs the ranking asks for."""
    body: dict[str, Any] = {}
    if ranking is not None:
        if ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {RANKINGS}, not {ranking!r}")
        body["ranking"] = ranking
    if ranking in (None, "bm25", "hybrid"):
        body["query"] = query or ""
    if ranking in ("dense", "hybrid"):
        if query_embedding is None:
            raise ValueError(f"ranking {ranking!r} needs a query embedding")
        body["query_embedding"] = [float(x) for x in query_embedding]
    if k is not None:
        body["k"] = k
    if fetch is not None:
        body["fetch"] = fetch
    if owners:
        body["owners"] = list(owners)
    return body


def item_request(
    *,
    owner: str,
    content: str,
    participants: Sequence[str] | None = None,
    identities: Sequence[tuple[str, str] | Mapping[str, str]] | None = None,
    visibility: Literal["public", "owner_private"] | None = None,
    id: str | None = None,
    author: str | None = None,
    subjects: Sequence[str] | None = None,
    embedding: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The body of `POST /items`: the origin audience is who was present (`participants` and/or
    `identities`) or a `visibility`, exactly one of the two ways (an origin is never guessed)."""
    present = bool(participants) or bool(identities)
    if present == (visibility is not None):
        raise ValueError("give who was present (participants/identities) or a visibility, exactly one of the two")
    origin: Any
    if visibility is not None:
        origin = visibility
    else:
        origin = {}
        if participants:
            origin["participants"] = list(participants)
        if identities:
            origin["identities"] = [_identity(i) for i in identities]
    body: dict[str, Any] = {"owner": owner, "content": content, "origin": origin}
    if id is not None:
        body["id"] = id
    if author is not None:
        body["author"] = author
    if subjects:
        body["subjects"] = list(subjects)
    if embedding is not None:
        body["embedding"] = [float(x) for x in embedding]
    return body


def _path(*parts: str) -> str:
    return "/v1/stores/" + "/".join(quote(p, safe="") for p in parts)


class EarshotHTTP:
    """Sync and async calls to one Earshot service (`base_url`, optional bearer `token`). Every
    error answer, and a service that cannot be reached, raises `EarshotAPIError`."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.timeout = timeout
        self._sync = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout)

    def close(self) -> None:
        self._sync.close()

    def __enter__(self) -> EarshotHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport ---------------------------------------------------------------------------

    def _post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            response = self._sync.post(path, json=body)
        except httpx.TransportError as e:
            raise EarshotAPIError(UNAVAILABLE, f"cannot reach {self.base_url}: {e}") from e
        return self._answer(response)

    async def _apost(self, client: httpx.AsyncClient, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            response = await client.post(path, json=body)
        except httpx.TransportError as e:
            raise EarshotAPIError(UNAVAILABLE, f"cannot reach {self.base_url}: {e}") from e
        return self._answer(response)

    def _async_client(self) -> httpx.AsyncClient:
        # One per call: an AsyncClient belongs to the event loop it was used on.
        return httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=self.timeout)

    @staticmethod
    def _answer(response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise EarshotAPIError.from_response(response)
        data = response.json()
        if not isinstance(data, dict):
            raise EarshotAPIError(
                UNEXPECTED_RESPONSE, f"not a JSON object: {response.text[:200]!r}", {}, response.status_code
            )
        return data

    # -- context assembly --------------------------------------------------------------------

    def assemble_context(
        self,
        store: str,
        container: Container,
        query: str | None = None,
        *,
        ranking: str | None = None,
        query_embedding: Sequence[float] | None = None,
        k: int | None = None,
        fetch: int | None = None,
        owners: Sequence[str] | None = None,
    ) -> Context:
        """Opens an attempt for `container` and assembles its context: only admissible items are
        ranked (by `ranking`, `bm25` when None). One attempt per call (a context is sealed once)."""
        body = context_request(query, ranking=ranking, query_embedding=query_embedding, k=k, fetch=fetch, owners=owners)
        attempt = self._post(_path(store, "attempts"), {"container": container.to_json()})
        return _context(self._post(_path(store, "attempts", attempt["attempt"], "context"), body))

    async def aassemble_context(
        self,
        store: str,
        container: Container,
        query: str | None = None,
        *,
        ranking: str | None = None,
        query_embedding: Sequence[float] | None = None,
        k: int | None = None,
        fetch: int | None = None,
        owners: Sequence[str] | None = None,
    ) -> Context:
        """`assemble_context`, without blocking the event loop."""
        body = context_request(query, ranking=ranking, query_embedding=query_embedding, k=k, fetch=fetch, owners=owners)
        async with self._async_client() as client:
            attempt = await self._apost(client, _path(store, "attempts"), {"container": container.to_json()})
            answer = await self._apost(client, _path(store, "attempts", attempt["attempt"], "context"), body)
        return _context(answer)

    # -- recording ---------------------------------------------------------------------------

    def remember(self, store: str, **item: Any) -> dict[str, Any]:
        """Records an item (`POST /items`, admin scope) with its origin audience bound now; the
        keyword arguments are `item_request`'s. Returns the API's write outcome (`ids`, …)."""
        return self._post(_path(store, "items"), item_request(**item))

    async def aremember(self, store: str, **item: Any) -> dict[str, Any]:
        body = item_request(**item)
        async with self._async_client() as client:
            return await self._apost(client, _path(store, "items"), body)

    # -- decisions (for post-filter comparisons) ---------------------------------------------

    def check_bulk(self, store: str, container: Container, items: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The decision on each item for `container` (`POST /check/bulk`), by item id."""
        answer = self._post(_path(store, "check", "bulk"), {"items": list(items), "container": container.to_json()})
        return {d["item"]: d for d in answer["results"]}

    # -- set-up (admin) ----------------------------------------------------------------------

    def create_store(self, store: str, name: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"id": store}
        if name is not None:
            body["name"] = name
        return self._post("/v1/stores", body)

    def add_participant(self, store: str, participant: str, kind: str = "person") -> dict[str, Any]:
        return self._post(_path(store, "participants"), {"id": participant, "kind": kind})

    def bind_identity(self, store: str, transport: str, identifier: str, participant: str) -> dict[str, Any]:
        body = {"transport": transport, "identifier": identifier, "participant": participant}
        return self._post(_path(store, "identities"), body)
