from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audience_kind import AudienceKind
from ..models.viewer_audience_source import ViewerAudienceSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="ViewerAudience")


@_attrs_define
class ViewerAudience:
    """
    Attributes:
        source (ViewerAudienceSource):
        kind (AudienceKind):
        digest (str):
        everyone (bool): Public: every container is admitted.
        members (list[str]): The largest admitted viewer set: a container whose viewers (owner included) all lie in it
            is admitted through this audience.
        grant (str | Unset):
        expires_at (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
            is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
    """

    source: ViewerAudienceSource
    kind: AudienceKind
    digest: str
    everyone: bool
    members: list[str]
    grant: str | Unset = UNSET
    expires_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source = self.source.value

        kind = self.kind.value

        digest = self.digest

        everyone = self.everyone

        members = self.members

        grant = self.grant

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "source": source,
                "kind": kind,
                "digest": digest,
                "everyone": everyone,
                "members": members,
            }
        )
        if grant is not UNSET:
            field_dict["grant"] = grant
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        source = ViewerAudienceSource(d.pop("source"))

        kind = AudienceKind(d.pop("kind"))

        digest = d.pop("digest")

        everyone = d.pop("everyone")

        members = cast(list[str], d.pop("members"))

        grant = d.pop("grant", UNSET)

        _expires_at = d.pop("expires_at", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)

        viewer_audience = cls(
            source=source,
            kind=kind,
            digest=digest,
            everyone=everyone,
            members=members,
            grant=grant,
            expires_at=expires_at,
        )

        viewer_audience.additional_properties = d
        return viewer_audience

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
