from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.action import Action
from ..types import UNSET, Unset

T = TypeVar("T", bound="LifecycleRequest")


@_attrs_define
class LifecycleRequest:
    """
    Attributes:
        action (Action): Lifecycle action. Legal transitions: supersede from active|frozen; freeze from active; unfreeze
            from frozen; quarantine from active|frozen; release from quarantined; revoke from
            active|frozen|quarantined|superseded; delete from any state but deleted. Anything else is refused with
            `invalid_transition`.
        by (None | str | Unset): Only with `supersede`: the item that supersedes this one (must exist and be newer, i.e.
            created after it; else 400 `invalid_request`).
    """

    action: Action
    by: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        by: None | str | Unset
        if isinstance(self.by, Unset):
            by = UNSET
        else:
            by = self.by

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
            }
        )
        if by is not UNSET:
            field_dict["by"] = by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = Action(d.pop("action"))

        def _parse_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        by = _parse_by(d.pop("by", UNSET))

        lifecycle_request = cls(
            action=action,
            by=by,
        )

        return lifecycle_request
