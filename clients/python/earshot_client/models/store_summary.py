from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StoreSummary")


@_attrs_define
class StoreSummary:
    """
    Attributes:
        id (str):
        revision (int | Unset): Absent for a store not started on this replica yet.
        token (str | Unset): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex
            digits>`). Pass it back as `at_least` or `at_exact`; a malformed token is refused with
            `invalid_consistency_token`, a token of another store with `consistency_token_store_mismatch`.
    """

    id: str
    revision: int | Unset = UNSET
    token: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        revision = self.revision

        token = self.token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
            }
        )
        if revision is not UNSET:
            field_dict["revision"] = revision
        if token is not UNSET:
            field_dict["token"] = token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        revision = d.pop("revision", UNSET)

        token = d.pop("token", UNSET)

        store_summary = cls(
            id=id,
            revision=revision,
            token=token,
        )

        store_summary.additional_properties = d
        return store_summary

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
