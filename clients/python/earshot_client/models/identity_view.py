from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="IdentityView")


@_attrs_define
class IdentityView:
    """
    Attributes:
        transport (str):
        identifier (str):
        participants (list[str]):
        resolves (bool): False when bound to more than one participant (ambiguous: resolves to nobody).
    """

    transport: str
    identifier: str
    participants: list[str]
    resolves: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        transport = self.transport

        identifier = self.identifier

        participants = self.participants

        resolves = self.resolves

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "transport": transport,
                "identifier": identifier,
                "participants": participants,
                "resolves": resolves,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        transport = d.pop("transport")

        identifier = d.pop("identifier")

        participants = cast(list[str], d.pop("participants"))

        resolves = d.pop("resolves")

        identity_view = cls(
            transport=transport,
            identifier=identifier,
            participants=participants,
            resolves=resolves,
        )

        identity_view.additional_properties = d
        return identity_view

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
