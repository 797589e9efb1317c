from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.replication import Replication


T = TypeVar("T", bound="StoreInfo")


@_attrs_define
class StoreInfo:
    """
    Attributes:
        id (str):
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        items (int): Items ever created, including deleted ones.
        audiences (int): Live audiences, including the public one.
        replication (Replication): How this replica stands against the shared datastore's head. `latest` reads here
            answer at `applied`; over PostgreSQL a replica polls the head every `follow_interval_ms` and replays the
            revision log, so `behind_revisions` is usually 0 and `behind_ms` the time since it last caught up while it is
            behind. On the embedded store always caught up.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
    """

    id: str
    revision: int
    token: str
    items: int
    audiences: int
    replication: Replication
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        revision = self.revision

        token = self.token

        items = self.items

        audiences = self.audiences

        replication = self.replication.to_dict()

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "revision": revision,
                "token": token,
                "items": items,
                "audiences": audiences,
                "replication": replication,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replication import Replication  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        revision = d.pop("revision")

        token = d.pop("token")

        items = d.pop("items")

        audiences = d.pop("audiences")

        replication = Replication.from_dict(d.pop("replication"))

        latest_revision = d.pop("latest_revision", UNSET)

        store_info = cls(
            id=id,
            revision=revision,
            token=token,
            items=items,
            audiences=audiences,
            replication=replication,
            latest_revision=latest_revision,
        )

        store_info.additional_properties = d
        return store_info

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
