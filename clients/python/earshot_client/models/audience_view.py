from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audience_kind import AudienceKind
from ..models.audience_view_source import AudienceViewSource
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consent_state import ConsentState


T = TypeVar("T", bound="AudienceView")


@_attrs_define
class AudienceView:
    """One authorized audience of an item.

    Attributes:
        source (AudienceViewSource):
        kind (AudienceKind):
        digest (str): Canonical SHA-256 digest of kind and members.
        members (list[str]): Sorted member ids; empty for the public audience.
        grant (str | Unset): With source `grant`: the grant id.
        expires_at (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
            is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        consent (ConsentState | Unset): The consent state of a grant on an item with subjects (SPEC §6.3). The grant
            admits only while `effective` (and live).
    """

    source: AudienceViewSource
    kind: AudienceKind
    digest: str
    members: list[str]
    grant: str | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET
    consent: ConsentState | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source = self.source.value

        kind = self.kind.value

        digest = self.digest

        members = self.members

        grant = self.grant

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
                "source": source,
                "kind": kind,
                "digest": digest,
                "members": members,
            }
        )
        if grant is not UNSET:
            field_dict["grant"] = grant
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if consent is not UNSET:
            field_dict["consent"] = consent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consent_state import ConsentState  # noqa: PLC0415

        d = dict(src_dict)
        source = AudienceViewSource(d.pop("source"))

        kind = AudienceKind(d.pop("kind"))

        digest = d.pop("digest")

        members = cast(list[str], d.pop("members"))

        grant = d.pop("grant", UNSET)

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

        audience_view = cls(
            source=source,
            kind=kind,
            digest=digest,
            members=members,
            grant=grant,
            expires_at=expires_at,
            consent=consent,
        )

        audience_view.additional_properties = d
        return audience_view

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
