from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SchemaResponseConflictsItem")


@_attrs_define
class SchemaResponseConflictsItem:
    """
    Attributes:
        name (str):
        members (list[str]):
        window (str): As written, e.g. `24h`.
        window_ms (int):
    """

    name: str
    members: list[str]
    window: str
    window_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        members = self.members

        window = self.window

        window_ms = self.window_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "members": members,
                "window": window,
                "window_ms": window_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        members = cast(list[str], d.pop("members"))

        window = d.pop("window")

        window_ms = d.pop("window_ms")

        schema_response_conflicts_item = cls(
            name=name,
            members=members,
            window=window,
            window_ms=window_ms,
        )

        schema_response_conflicts_item.additional_properties = d
        return schema_response_conflicts_item

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
