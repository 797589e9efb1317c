from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AuthorityOwner")


@_attrs_define
class AuthorityOwner:
    """
    Attributes:
        kind (Literal['owner']):
        device (str):
        owner (str):
    """

    kind: Literal["owner"]
    device: str
    owner: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        device = self.device

        owner = self.owner

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "device": device,
                "owner": owner,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal["owner"], d.pop("kind"))
        if kind != "owner":
            raise ValueError(f"kind must match const 'owner', got '{kind}'")

        device = d.pop("device")

        owner = d.pop("owner")

        authority_owner = cls(
            kind=kind,
            device=device,
            owner=owner,
        )

        authority_owner.additional_properties = d
        return authority_owner

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
