from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ranking import Ranking
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container import Container
    from ..models.container_resolution import ContainerResolution
    from ..models.context_candidate import ContextCandidate
    from ..models.context_item import ContextItem


T = TypeVar("T", bound="SealedContext")


@_attrs_define
class SealedContext:
    """The exact context of one attempt, sealed when assembled.

    Attributes:
        attempt (str):
        revision (int): The attempt's pinned revision.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is required (an
            instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC with
            millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        sealed_at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is
            required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        container (Container): A container: one conversation turn or model attempt.
        resolved (bool):
        owners (list[str]):
        query (str):
        fetch (int):
        k (int):
        candidates (int): How many admissible candidates were ranked.
        fetched (list[ContextCandidate]): The fetch window in rank order.
        items (list[ContextItem]): The context: the first `k` of the window.
        resolution (ContainerResolution | Unset): Whether the container resolved and, when it did not, why. An
            unresolved container's viewers are everyone (`U`): fail-closed, it is admitted public items only. The first
            input at fault is reported, in request order: owner, viewer participants, viewer identities, quality.
        ranking (Ranking | Unset): How a context ranks its admissible candidates (and only them, SPEC §1.10, §6.1).
            `bm25`: BM25 over item content with the candidates' corpus statistics; needs `query`. `dense`: the similarity of
            each candidate's embedding to `query_embedding` (the dot product, of unit vectors under `cosine`); needs
            `query_embedding`; candidates without an embedding are not ranked. `hybrid`: reciprocal rank fusion of the two,
            score `Σ 1/(60 + rank)` over the candidates' BM25 order and dense order (ranks from 1, within the candidates; an
            item absent from one order gets nothing from it); needs both. A score depends only on the query and the
            candidates, so an item the container may not see can shift neither a score nor a rank. Ties by item id.
        query_embedding_digest (str | Unset): SHA-256 (hex) of the query embedding as little-endian 32-bit floats; the
            vector itself is not kept. Absent for `bm25`.
    """

    attempt: str
    revision: int
    token: str
    at: datetime.datetime
    sealed_at: datetime.datetime
    container: Container
    resolved: bool
    owners: list[str]
    query: str
    fetch: int
    k: int
    candidates: int
    fetched: list[ContextCandidate]
    items: list[ContextItem]
    resolution: ContainerResolution | Unset = UNSET
    ranking: Ranking | Unset = UNSET
    query_embedding_digest: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        revision = self.revision

        token = self.token

        at = self.at.isoformat()

        sealed_at = self.sealed_at.isoformat()

        container = self.container.to_dict()

        resolved = self.resolved

        owners = self.owners

        query = self.query

        fetch = self.fetch

        k = self.k

        candidates = self.candidates

        fetched = []
        for fetched_item_data in self.fetched:
            fetched_item = fetched_item_data.to_dict()
            fetched.append(fetched_item)

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        resolution: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resolution, Unset):
            resolution = self.resolution.to_dict()

        ranking: str | Unset = UNSET
        if not isinstance(self.ranking, Unset):
            ranking = self.ranking.value

        query_embedding_digest = self.query_embedding_digest

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "revision": revision,
                "token": token,
                "at": at,
                "sealed_at": sealed_at,
                "container": container,
                "resolved": resolved,
                "owners": owners,
                "query": query,
                "fetch": fetch,
                "k": k,
                "candidates": candidates,
                "fetched": fetched,
                "items": items,
            }
        )
        if resolution is not UNSET:
            field_dict["resolution"] = resolution
        if ranking is not UNSET:
            field_dict["ranking"] = ranking
        if query_embedding_digest is not UNSET:
            field_dict["query_embedding_digest"] = query_embedding_digest

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container import Container  # noqa: PLC0415
        from ..models.container_resolution import ContainerResolution  # noqa: PLC0415
        from ..models.context_candidate import ContextCandidate  # noqa: PLC0415
        from ..models.context_item import ContextItem  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        revision = d.pop("revision")

        token = d.pop("token")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        sealed_at = datetime.datetime.fromisoformat(d.pop("sealed_at"))

        container = Container.from_dict(d.pop("container"))

        resolved = d.pop("resolved")

        owners = cast(list[str], d.pop("owners"))

        query = d.pop("query")

        fetch = d.pop("fetch")

        k = d.pop("k")

        candidates = d.pop("candidates")

        fetched = []
        _fetched = d.pop("fetched")
        for fetched_item_data in _fetched:
            fetched_item = ContextCandidate.from_dict(fetched_item_data)

            fetched.append(fetched_item)

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = ContextItem.from_dict(items_item_data)

            items.append(items_item)

        _resolution = d.pop("resolution", UNSET)
        resolution: ContainerResolution | Unset
        if isinstance(_resolution, Unset):
            resolution = UNSET
        else:
            resolution = ContainerResolution.from_dict(_resolution)

        _ranking = d.pop("ranking", UNSET)
        ranking: Ranking | Unset
        if isinstance(_ranking, Unset):
            ranking = UNSET
        else:
            ranking = Ranking(_ranking)

        query_embedding_digest = d.pop("query_embedding_digest", UNSET)

        sealed_context = cls(
            attempt=attempt,
            revision=revision,
            token=token,
            at=at,
            sealed_at=sealed_at,
            container=container,
            resolved=resolved,
            owners=owners,
            query=query,
            fetch=fetch,
            k=k,
            candidates=candidates,
            fetched=fetched,
            items=items,
            resolution=resolution,
            ranking=ranking,
            query_embedding_digest=query_embedding_digest,
        )

        sealed_context.additional_properties = d
        return sealed_context

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
