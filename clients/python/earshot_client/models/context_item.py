from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.basis import Basis
from ..models.reason import Reason
from ..types import UNSET, Unset

T = TypeVar("T", bound="ContextItem")


@_attrs_define
class ContextItem:
    """
    Attributes:
        rank (int):
        item (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        score (float): BM25 score among the admissible candidates.
        basis (Basis): Which authorized audience admitted the item: the origin audience or a grant.
        reason (Reason): The closed set of decision reasons.
        digest (str | Unset): SHA-256 (hex) of the indexed content; absent for an item without content.
        grant (str | Unset): The admitting grant, when the basis is `grant`.
        content (str | Unset): The content; in the assembling response only, never in the sealed record.
    """

    rank: int
    item: str
    score: float
    basis: Basis
    reason: Reason
    digest: str | Unset = UNSET
    grant: str | Unset = UNSET
    content: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rank = self.rank

        item = self.item

        score = self.score

        basis = self.basis.value

        reason = self.reason.value

        digest = self.digest

        grant = self.grant

        content = self.content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "rank": rank,
                "item": item,
                "score": score,
                "basis": basis,
                "reason": reason,
            }
        )
        if digest is not UNSET:
            field_dict["digest"] = digest
        if grant is not UNSET:
            field_dict["grant"] = grant
        if content is not UNSET:
            field_dict["content"] = content

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rank = d.pop("rank")

        item = d.pop("item")

        score = d.pop("score")

        basis = Basis(d.pop("basis"))

        reason = Reason(d.pop("reason"))

        digest = d.pop("digest", UNSET)

        grant = d.pop("grant", UNSET)

        content = d.pop("content", UNSET)

        context_item = cls(
            rank=rank,
            item=item,
            score=score,
            basis=basis,
            reason=reason,
            digest=digest,
            grant=grant,
            content=content,
        )

        context_item.additional_properties = d
        return context_item

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
