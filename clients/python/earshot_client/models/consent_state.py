from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consent_event import ConsentEvent


T = TypeVar("T", bound="ConsentState")


@_attrs_define
class ConsentState:
    """The consent state of a grant on an item with subjects (SPEC §6.3). The grant admits only while `effective` (and
    live).

        Attributes:
            required (list[str]): The item's subjects other than its owner: each must consent.
            consented (list[str]): Subjects whose consent is in force.
            missing (list[str]): Required subjects without consent in force.
            withdrawn (list[str]): Those of `missing` whose last decision was a withdrawal.
            effective (bool): Every required subject consents now.
            history (list[ConsentEvent] | Unset): Every decision in order (item and grant views; absent from expand and when
                empty).
    """

    required: list[str]
    consented: list[str]
    missing: list[str]
    withdrawn: list[str]
    effective: bool
    history: list[ConsentEvent] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        required = self.required

        consented = self.consented

        missing = self.missing

        withdrawn = self.withdrawn

        effective = self.effective

        history: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.history, Unset):
            history = []
            for history_item_data in self.history:
                history_item = history_item_data.to_dict()
                history.append(history_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "required": required,
                "consented": consented,
                "missing": missing,
                "withdrawn": withdrawn,
                "effective": effective,
            }
        )
        if history is not UNSET:
            field_dict["history"] = history

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consent_event import ConsentEvent  # noqa: PLC0415

        d = dict(src_dict)
        required = cast(list[str], d.pop("required"))

        consented = cast(list[str], d.pop("consented"))

        missing = cast(list[str], d.pop("missing"))

        withdrawn = cast(list[str], d.pop("withdrawn"))

        effective = d.pop("effective")

        _history = d.pop("history", UNSET)
        history: list[ConsentEvent] | Unset = UNSET
        if _history is not UNSET:
            history = []
            for history_item_data in _history:
                history_item = ConsentEvent.from_dict(history_item_data)

                history.append(history_item)

        consent_state = cls(
            required=required,
            consented=consented,
            missing=missing,
            withdrawn=withdrawn,
            effective=effective,
            history=history,
        )

        consent_state.additional_properties = d
        return consent_state

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
