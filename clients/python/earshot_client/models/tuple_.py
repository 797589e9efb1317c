from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.object_ref import ObjectRef


T = TypeVar("T", bound="Tuple")


@_attrs_define
class Tuple:
    """A relationship tuple `resource#relation@subject`.

    Attributes:
        resource (ObjectRef):
        relation (str): `member`, `origin`, `granted`, `derived_from`, `owner`, `relation:<name>`, `delegated_from` or
            `held_by`.
        subject (ObjectRef):
        grant (str | Unset): `granted`: the grant's id.
        expires_at (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
            is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        edge (str | Unset): `relation:<name>`: the edge's id.
        device (str | Unset): `delegated_from`, `held_by`: the capability's device.
        revoked (bool | Unset):
        live (bool | Unset): `granted`: counts now.
        consent_pending (bool | Unset): `granted`: present (true) while the grant waits for a subject's consent (SPEC
            §6.3); it then admits nothing.
    """

    resource: ObjectRef
    relation: str
    subject: ObjectRef
    grant: str | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET
    edge: str | Unset = UNSET
    device: str | Unset = UNSET
    revoked: bool | Unset = UNSET
    live: bool | Unset = UNSET
    consent_pending: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        resource = self.resource.to_dict()

        relation = self.relation

        subject = self.subject.to_dict()

        grant = self.grant

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        edge = self.edge

        device = self.device

        revoked = self.revoked

        live = self.live

        consent_pending = self.consent_pending

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "resource": resource,
                "relation": relation,
                "subject": subject,
            }
        )
        if grant is not UNSET:
            field_dict["grant"] = grant
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if edge is not UNSET:
            field_dict["edge"] = edge
        if device is not UNSET:
            field_dict["device"] = device
        if revoked is not UNSET:
            field_dict["revoked"] = revoked
        if live is not UNSET:
            field_dict["live"] = live
        if consent_pending is not UNSET:
            field_dict["consent_pending"] = consent_pending

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.object_ref import ObjectRef  # noqa: PLC0415

        d = dict(src_dict)
        resource = ObjectRef.from_dict(d.pop("resource"))

        relation = d.pop("relation")

        subject = ObjectRef.from_dict(d.pop("subject"))

        grant = d.pop("grant", UNSET)

        _expires_at = d.pop("expires_at", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)

        edge = d.pop("edge", UNSET)

        device = d.pop("device", UNSET)

        revoked = d.pop("revoked", UNSET)

        live = d.pop("live", UNSET)

        consent_pending = d.pop("consent_pending", UNSET)

        tuple_ = cls(
            resource=resource,
            relation=relation,
            subject=subject,
            grant=grant,
            expires_at=expires_at,
            edge=edge,
            device=device,
            revoked=revoked,
            live=live,
            consent_pending=consent_pending,
        )

        tuple_.additional_properties = d
        return tuple_

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
