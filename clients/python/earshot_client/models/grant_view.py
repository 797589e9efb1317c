from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audience_kind import AudienceKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consent_state import ConsentState


T = TypeVar("T", bound="GrantView")


@_attrs_define
class GrantView:
    """
    Attributes:
        id (str):
        item (str):
        kind (AudienceKind):
        digest (str):
        members (list[str]):
        issuer (str): Name of the token that issued the grant (`local` with authentication off).
        created_at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is
            required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        revoked (bool):
        live (bool): Not revoked and not expired now.
        reason (str | Unset):
        expires_at (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
            is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        consent (ConsentState | Unset): The consent state of a grant on an item with subjects (SPEC §6.3). The grant
            admits only while `effective` (and live).
    """

    id: str
    item: str
    kind: AudienceKind
    digest: str
    members: list[str]
    issuer: str
    created_at: datetime.datetime
    revoked: bool
    live: bool
    reason: str | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET
    consent: ConsentState | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        item = self.item

        kind = self.kind.value

        digest = self.digest

        members = self.members

        issuer = self.issuer

        created_at = self.created_at.isoformat()

        revoked = self.revoked

        live = self.live

        reason = self.reason

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        consent: dict[str, Any] | Unset = UNSET
        if not isinstance(self.consent, Unset):
            consent = self.consent.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "item": item,
                "kind": kind,
                "digest": digest,
                "members": members,
                "issuer": issuer,
                "created_at": created_at,
                "revoked": revoked,
                "live": live,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if consent is not UNSET:
            field_dict["consent"] = consent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consent_state import ConsentState  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        item = d.pop("item")

        kind = AudienceKind(d.pop("kind"))

        digest = d.pop("digest")

        members = cast(list[str], d.pop("members"))

        issuer = d.pop("issuer")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        revoked = d.pop("revoked")

        live = d.pop("live")

        reason = d.pop("reason", UNSET)

        _expires_at = d.pop("expires_at", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)

        _consent = d.pop("consent", UNSET)
        consent: ConsentState | Unset
        if isinstance(_consent, Unset):
            consent = UNSET
        else:
            consent = ConsentState.from_dict(_consent)

        grant_view = cls(
            id=id,
            item=item,
            kind=kind,
            digest=digest,
            members=members,
            issuer=issuer,
            created_at=created_at,
            revoked=revoked,
            live=live,
            reason=reason,
            expires_at=expires_at,
            consent=consent,
        )

        grant_view.additional_properties = d
        return grant_view

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
