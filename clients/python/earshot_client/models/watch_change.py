from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.watch_change_change import WatchChangeChange


T = TypeVar("T", bound="WatchChange")


@_attrs_define
class WatchChange:
    """A watch stream's line for one revision: what it changed.

    Attributes:
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        committed_at (datetime.datetime):
        change (WatchChangeChange): `kind` is one of store_created, participant_created, participant_removed,
            identity_bound, item_created, item_lifecycle, item_derived, grant_created, grant_revoked, consent_given,
            consent_withdrawn, schema_put, device_created, relation_created, relation_revoked, capability_created,
            capability_revoked, use_consumed, trust_created, trust_revoked; the other fields name what it touched (`item`,
            `grant`, `participant`, `subject`, `device`, `edge`, `capability`, `trust`, `issuer`, `by`, `owner`, `sources`)
            and `ids` what it created or changed.
    """

    revision: int
    token: str
    committed_at: datetime.datetime
    change: WatchChangeChange

    def to_dict(self) -> dict[str, Any]:
        revision = self.revision

        token = self.token

        committed_at = self.committed_at.isoformat()

        change = self.change.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "revision": revision,
                "token": token,
                "committed_at": committed_at,
                "change": change,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.watch_change_change import WatchChangeChange  # noqa: PLC0415

        d = dict(src_dict)
        revision = d.pop("revision")

        token = d.pop("token")

        committed_at = datetime.datetime.fromisoformat(d.pop("committed_at"))

        change = WatchChangeChange.from_dict(d.pop("change"))

        watch_change = cls(
            revision=revision,
            token=token,
            committed_at=committed_at,
            change=change,
        )

        return watch_change
