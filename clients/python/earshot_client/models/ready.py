from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ready_status import ReadyStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ready_degraded import ReadyDegraded


T = TypeVar("T", bound="Ready")


@_attrs_define
class Ready:
    """`ready` (200); `degraded` (503) with `degraded` naming each store that cannot make writes durable now, or (over a
    shared datastore) has not caught up with the datastore's head within `ready_max_lag_ms`, and why; or `draining`
    (503) while the service shuts down. Reads are still served while degraded; `/healthz` is the liveness probe.

        Attributes:
            status (ReadyStatus):
            stores (int): How many stores are running.
            degraded (ReadyDegraded | Unset): Store id → why its writes cannot be made durable now. Present only when
                degraded.
    """

    status: ReadyStatus
    stores: int
    degraded: ReadyDegraded | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        stores = self.stores

        degraded: dict[str, Any] | Unset = UNSET
        if not isinstance(self.degraded, Unset):
            degraded = self.degraded.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
                "stores": stores,
            }
        )
        if degraded is not UNSET:
            field_dict["degraded"] = degraded

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ready_degraded import ReadyDegraded  # noqa: PLC0415

        d = dict(src_dict)
        status = ReadyStatus(d.pop("status"))

        stores = d.pop("stores")

        _degraded = d.pop("degraded", UNSET)
        degraded: ReadyDegraded | Unset
        if isinstance(_degraded, Unset):
            degraded = UNSET
        else:
            degraded = ReadyDegraded.from_dict(_degraded)

        ready = cls(
            status=status,
            stores=stores,
            degraded=degraded,
        )

        ready.additional_properties = d
        return ready

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
