from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.audience_view import AudienceView


T = TypeVar("T", bound="ExpandResponseHistorical")


@_attrs_define
class ExpandResponseHistorical:
    """Historical answer (SPEC §2.6, an `at_exact` read whose answers may not be used now): the item and its authorized
    audiences as they were at `revision`, for audit only.

        Attributes:
            item (str):
            audiences (list[AudienceView]):
    """

    item: str
    audiences: list[AudienceView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        audiences = []
        for audiences_item_data in self.audiences:
            audiences_item = audiences_item_data.to_dict()
            audiences.append(audiences_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "audiences": audiences,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audience_view import AudienceView  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        audiences = []
        _audiences = d.pop("audiences")
        for audiences_item_data in _audiences:
            audiences_item = AudienceView.from_dict(audiences_item_data)

            audiences.append(audiences_item)

        expand_response_historical = cls(
            item=item,
            audiences=audiences,
        )

        expand_response_historical.additional_properties = d
        return expand_response_historical

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
