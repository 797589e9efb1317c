from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AggregationClash")


@_attrs_define
class AggregationClash:
    """
    Attributes:
        conflict (str): The schema's conflict the use would complete.
        earlier_use (str | Unset): The earlier use (`use-<n>`) of another member; absent when the requested slice
            matches two members by itself.
        earlier_device (str | Unset):
        earlier_path (str | Unset):
        earlier_at (datetime.datetime | Unset):
    """

    conflict: str
    earlier_use: str | Unset = UNSET
    earlier_device: str | Unset = UNSET
    earlier_path: str | Unset = UNSET
    earlier_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        conflict = self.conflict

        earlier_use = self.earlier_use

        earlier_device = self.earlier_device

        earlier_path = self.earlier_path

        earlier_at: str | Unset = UNSET
        if not isinstance(self.earlier_at, Unset):
            earlier_at = self.earlier_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "conflict": conflict,
            }
        )
        if earlier_use is not UNSET:
            field_dict["earlier_use"] = earlier_use
        if earlier_device is not UNSET:
            field_dict["earlier_device"] = earlier_device
        if earlier_path is not UNSET:
            field_dict["earlier_path"] = earlier_path
        if earlier_at is not UNSET:
            field_dict["earlier_at"] = earlier_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        conflict = d.pop("conflict")

        earlier_use = d.pop("earlier_use", UNSET)

        earlier_device = d.pop("earlier_device", UNSET)

        earlier_path = d.pop("earlier_path", UNSET)

        _earlier_at = d.pop("earlier_at", UNSET)
        earlier_at: datetime.datetime | Unset
        if isinstance(_earlier_at, Unset):
            earlier_at = UNSET
        else:
            earlier_at = datetime.datetime.fromisoformat(_earlier_at)

        aggregation_clash = cls(
            conflict=conflict,
            earlier_use=earlier_use,
            earlier_device=earlier_device,
            earlier_path=earlier_path,
            earlier_at=earlier_at,
        )

        aggregation_clash.additional_properties = d
        return aggregation_clash

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
