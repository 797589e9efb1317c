from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="WatchChangeChange")


@_attrs_define
class WatchChangeChange:
    """`kind` is one of store_created, participant_created, participant_removed, identity_bound, item_created,
    item_lifecycle, item_derived, grant_created, grant_revoked, consent_given, consent_withdrawn, schema_put,
    device_created, relation_created, relation_revoked, capability_created, capability_revoked, use_consumed,
    trust_created, trust_revoked; the other fields name what it touched (`item`, `grant`, `participant`, `subject`,
    `device`, `edge`, `capability`, `trust`, `issuer`, `by`, `owner`, `sources`) and `ids` what it created or changed.

        Attributes:
            kind (str):
            outcome (str):
            ids (list[str] | Unset):
    """

    kind: str
    outcome: str
    ids: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        outcome = self.outcome

        ids: list[str] | Unset = UNSET
        if not isinstance(self.ids, Unset):
            ids = self.ids

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "outcome": outcome,
            }
        )
        if ids is not UNSET:
            field_dict["ids"] = ids

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind")

        outcome = d.pop("outcome")

        ids = cast(list[str], d.pop("ids", UNSET))

        watch_change_change = cls(
            kind=kind,
            outcome=outcome,
            ids=ids,
        )

        watch_change_change.additional_properties = d
        return watch_change_change

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
