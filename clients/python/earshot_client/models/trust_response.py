from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TrustResponse")


@_attrs_define
class TrustResponse:
    """A trust delegation at the revision read.

    Attributes:
        id (str):
        owner (str):
        participant (str):
        issuer (str): The authenticated caller that recorded it.
        created_at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is
            required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        created_revision (int):
        revoked (bool):
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        reason (str | Unset):
        revoked_at (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
            is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        revoked_revision (int | Unset): The revision from which the delegation no longer counts.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
    """

    id: str
    owner: str
    participant: str
    issuer: str
    created_at: datetime.datetime
    created_revision: int
    revoked: bool
    revision: int
    token: str
    reason: str | Unset = UNSET
    revoked_at: datetime.datetime | Unset = UNSET
    revoked_revision: int | Unset = UNSET
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        owner = self.owner

        participant = self.participant

        issuer = self.issuer

        created_at = self.created_at.isoformat()

        created_revision = self.created_revision

        revoked = self.revoked

        revision = self.revision

        token = self.token

        reason = self.reason

        revoked_at: str | Unset = UNSET
        if not isinstance(self.revoked_at, Unset):
            revoked_at = self.revoked_at.isoformat()

        revoked_revision = self.revoked_revision

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "owner": owner,
                "participant": participant,
                "issuer": issuer,
                "created_at": created_at,
                "created_revision": created_revision,
                "revoked": revoked,
                "revision": revision,
                "token": token,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason
        if revoked_at is not UNSET:
            field_dict["revoked_at"] = revoked_at
        if revoked_revision is not UNSET:
            field_dict["revoked_revision"] = revoked_revision
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        owner = d.pop("owner")

        participant = d.pop("participant")

        issuer = d.pop("issuer")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_revision = d.pop("created_revision")

        revoked = d.pop("revoked")

        revision = d.pop("revision")

        token = d.pop("token")

        reason = d.pop("reason", UNSET)

        _revoked_at = d.pop("revoked_at", UNSET)
        revoked_at: datetime.datetime | Unset
        if isinstance(_revoked_at, Unset):
            revoked_at = UNSET
        else:
            revoked_at = datetime.datetime.fromisoformat(_revoked_at)

        revoked_revision = d.pop("revoked_revision", UNSET)

        latest_revision = d.pop("latest_revision", UNSET)

        trust_response = cls(
            id=id,
            owner=owner,
            participant=participant,
            issuer=issuer,
            created_at=created_at,
            created_revision=created_revision,
            revoked=revoked,
            revision=revision,
            token=token,
            reason=reason,
            revoked_at=revoked_at,
            revoked_revision=revoked_revision,
            latest_revision=latest_revision,
        )

        trust_response.additional_properties = d
        return trust_response

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
