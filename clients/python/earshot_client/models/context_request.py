from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ContextRequest")


@_attrs_define
class ContextRequest:
    """
    Attributes:
        query (str): Free text; analysed like item content (lower-cased words). Must not be blank.
        fetch (int | Unset): Fetch budget: how many ranked candidates form the window. Default: 20.
        k (int | Unset): Context size, at most `fetch`. Default: 5.
        owners (list[str] | Unset): Whose memories to search; defaults to the container's owner.
    """

    query: str
    fetch: int | Unset = 20
    k: int | Unset = 5
    owners: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        fetch = self.fetch

        k = self.k

        owners: list[str] | Unset = UNSET
        if not isinstance(self.owners, Unset):
            owners = self.owners

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "query": query,
            }
        )
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
        query = d.pop("query")

        fetch = d.pop("fetch", UNSET)

        k = d.pop("k", UNSET)

        owners = cast(list[str], d.pop("owners", UNSET))

        context_request = cls(
            query=query,
            fetch=fetch,
            k=k,
            owners=owners,
        )

        return context_request
