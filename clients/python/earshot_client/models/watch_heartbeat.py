from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.watch_heartbeat_heartbeat import WatchHeartbeatHeartbeat


T = TypeVar("T", bound="WatchHeartbeat")


@_attrs_define
class WatchHeartbeat:
    """A watch stream's line while nothing changes: the revision the stream has reached.

    Attributes:
        heartbeat (WatchHeartbeatHeartbeat):
    """

    heartbeat: WatchHeartbeatHeartbeat

    def to_dict(self) -> dict[str, Any]:
        heartbeat = self.heartbeat.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "heartbeat": heartbeat,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.watch_heartbeat_heartbeat import WatchHeartbeatHeartbeat  # noqa: PLC0415

        d = dict(src_dict)
        heartbeat = WatchHeartbeatHeartbeat.from_dict(d.pop("heartbeat"))

        watch_heartbeat = cls(
            heartbeat=heartbeat,
        )

        return watch_heartbeat
