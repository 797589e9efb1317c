from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.consent_event_action import ConsentEventAction

T = TypeVar("T", bound="ConsentEvent")


@_attrs_define
class ConsentEvent:
    """One recorded consent decision (audit).

    Attributes:
        subject (str):
        action (ConsentEventAction):
        at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is required (an
            instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC with
            millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        revision (int): The revision that recorded the decision.
    """

    subject: str
    action: ConsentEventAction
    at: datetime.datetime
    revision: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        subject = self.subject

        action = self.action.value

        at = self.at.isoformat()

        revision = self.revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "subject": subject,
                "action": action,
                "at": at,
                "revision": revision,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        subject = d.pop("subject")

        action = ConsentEventAction(d.pop("action"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        revision = d.pop("revision")

        consent_event = cls(
            subject=subject,
            action=action,
            at=at,
            revision=revision,
        )

        consent_event.additional_properties = d
        return consent_event

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
