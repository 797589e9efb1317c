from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ranking import Ranking
from ..types import UNSET, Unset

T = TypeVar("T", bound="ContextRequest")


@_attrs_define
class ContextRequest:
    """
    Attributes:
        query (str | Unset): Free text; analysed like item content (lower-cased words). Needed, and not blank, for
            `bm25` (the default) and `hybrid`; absent or empty for `dense`.
        query_embedding (list[float] | Unset): An embedding for dense recall: at most 4096 finite numbers, each within
            ±1e6 (else 422 `invalid_embedding`). A store's dimension and metric are fixed by the first embedding written to
            it (recorded durably, for every replica); a later embedding of another length is 422
            `embedding_dimension_mismatch`. Under `cosine` (the default) an embedding is normalised when written, so scores
            are dot products of unit vectors; a zero vector is then 422 `invalid_embedding`. Memory: 4 bytes per dimension
            per item in the dense projection (1,536 bytes at 384 dimensions).
        ranking (Ranking | Unset): How a context ranks its admissible candidates (and only them, SPEC §1.10, §6.1).
            `bm25`: BM25 over item content with the candidates' corpus statistics; needs `query`. `dense`: the similarity of
            each candidate's embedding to `query_embedding` (the dot product, of unit vectors under `cosine`); needs
            `query_embedding`; candidates without an embedding are not ranked. `hybrid`: reciprocal rank fusion of the two,
            score `Σ 1/(60 + rank)` over the candidates' BM25 order and dense order (ranks from 1, within the candidates; an
            item absent from one order gets nothing from it); needs both. A score depends only on the query and the
            candidates, so an item the container may not see can shift neither a score nor a rank. Ties by item id.
        fetch (int | Unset): Fetch budget: how many ranked candidates form the window. Default: 20.
        k (int | Unset): Context size, at most `fetch`. Default: 5.
        owners (list[str] | Unset): Whose memories to search; defaults to the container's owner.
    """

    query: str | Unset = UNSET
    query_embedding: list[float] | Unset = UNSET
    ranking: Ranking | Unset = UNSET
    fetch: int | Unset = 20
    k: int | Unset = 5
    owners: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        query_embedding: list[float] | Unset = UNSET
        if not isinstance(self.query_embedding, Unset):
            query_embedding = self.query_embedding

        ranking: str | Unset = UNSET
        if not isinstance(self.ranking, Unset):
            ranking = self.ranking.value

        fetch = self.fetch

        k = self.k

        owners: list[str] | Unset = UNSET
        if not isinstance(self.owners, Unset):
            owners = self.owners

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if query is not UNSET:
            field_dict["query"] = query
        if query_embedding is not UNSET:
            field_dict["query_embedding"] = query_embedding
        if ranking is not UNSET:
            field_dict["ranking"] = ranking
        if fetch is not UNSET:
            field_dict["fetch"] = fetch
        if k is not UNSET:
            field_dict["k"] = k
        if owners is not UNSET:
            field_dict["owners"] = owners

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        query = d.pop("query", UNSET)

        query_embedding = cast(list[float], d.pop("query_embedding", UNSET))

        _ranking = d.pop("ranking", UNSET)
        ranking: Ranking | Unset
        if isinstance(_ranking, Unset):
            ranking = UNSET
        else:
            ranking = Ranking(_ranking)

        fetch = d.pop("fetch", UNSET)

        k = d.pop("k", UNSET)

        owners = cast(list[str], d.pop("owners", UNSET))

        context_request = cls(
            query=query,
            query_embedding=query_embedding,
            ranking=ranking,
            fetch=fetch,
            k=k,
            owners=owners,
        )

        return context_request
