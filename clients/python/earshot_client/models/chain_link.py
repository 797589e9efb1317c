from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ChainLink")


@_attrs_define
class ChainLink:
    """
    Attributes:
        capability (str):
        holder (str):
        issuer (str):
        paths (list[str]):
        actions (list[str]):
    """

    capability: str
    holder: str
    issuer: str
    paths: list[str]
    actions: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        capability = self.capability

        holder = self.holder

        issuer = self.issuer

        paths = self.paths

        actions = self.actions

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "capability": capability,
                "holder": holder,
                "issuer": issuer,
                "paths": paths,
                "actions": actions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        capability = d.pop("capability")

        holder = d.pop("holder")

        issuer = d.pop("issuer")

        paths = cast(list[str], d.pop("paths"))

        actions = cast(list[str], d.pop("actions"))

        chain_link = cls(
            capability=capability,
            holder=holder,
            issuer=issuer,
            paths=paths,
            actions=actions,
        )

        chain_link.additional_properties = d
        return chain_link

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
