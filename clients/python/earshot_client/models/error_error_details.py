from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.action import Action
from ..models.state import State
from ..types import UNSET, Unset

T = TypeVar("T", bound="ErrorErrorDetails")


@_attrs_define
class ErrorErrorDetails:
    """Structured details; `{}` unless stated for the code.

    Attributes:
        field (str | Unset):
        limit (int | Unset):
        requested (int | Unset):
        oldest_retained (int | Unset):
        latest (int | Unset):
        state (State | Unset): Lifecycle state of an item.
        action (Action | Unset): Lifecycle action. Legal transitions: supersede from active|frozen; freeze from active;
            unfreeze from frozen; quarantine from active|frozen; release from quarantined; revoke from
            active|frozen|quarantined|superseded; delete from any state but deleted. Anything else is refused with
            `invalid_transition`.
        output (int | Unset):
        source (str | Unset):
    """

    field: str | Unset = UNSET
    limit: int | Unset = UNSET
    requested: int | Unset = UNSET
    oldest_retained: int | Unset = UNSET
    latest: int | Unset = UNSET
    state: State | Unset = UNSET
    action: Action | Unset = UNSET
    output: int | Unset = UNSET
    source: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        field = self.field

        limit = self.limit

        requested = self.requested

        oldest_retained = self.oldest_retained

        latest = self.latest

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        action: str | Unset = UNSET
        if not isinstance(self.action, Unset):
            action = self.action.value

        output = self.output

        source = self.source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if field is not UNSET:
            field_dict["field"] = field
        if limit is not UNSET:
            field_dict["limit"] = limit
        if requested is not UNSET:
            field_dict["requested"] = requested
        if oldest_retained is not UNSET:
            field_dict["oldest_retained"] = oldest_retained
        if latest is not UNSET:
            field_dict["latest"] = latest
        if state is not UNSET:
            field_dict["state"] = state
        if action is not UNSET:
            field_dict["action"] = action
        if output is not UNSET:
            field_dict["output"] = output
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field", UNSET)

        limit = d.pop("limit", UNSET)

        requested = d.pop("requested", UNSET)

        oldest_retained = d.pop("oldest_retained", UNSET)

        latest = d.pop("latest", UNSET)

        _state = d.pop("state", UNSET)
        state: State | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = State(_state)

        _action = d.pop("action", UNSET)
        action: Action | Unset
        if isinstance(_action, Unset):
            action = UNSET
        else:
            action = Action(_action)

        output = d.pop("output", UNSET)

        source = d.pop("source", UNSET)

        error_error_details = cls(
            field=field,
            limit=limit,
            requested=requested,
            oldest_retained=oldest_retained,
            latest=latest,
            state=state,
            action=action,
            output=output,
            source=source,
        )

        error_error_details.additional_properties = d
        return error_error_details

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
