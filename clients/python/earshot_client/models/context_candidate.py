from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ContextCandidate")


@_attrs_define
class ContextCandidate:
    """
    Attributes:
        item (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        score (float):
    """

    item: str
    score: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        score = self.score

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "score": score,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        item = d.pop("item")

        score = d.pop("score")

        context_candidate = cls(
            item=item,
            score=score,
        )

        context_candidate.additional_properties = d
        return context_candidate

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
