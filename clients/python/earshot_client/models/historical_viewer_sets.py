from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.blocked_by import BlockedBy
    from ..models.viewer_audience import ViewerAudience


T = TypeVar("T", bound="HistoricalViewerSets")


@_attrs_define
class HistoricalViewerSets:
    """The viewer sets of an item as they were at an older revision (for audit only).

    Attributes:
        item (str):
        current (bool):
        audiences (list[ViewerAudience]): Origin first, then each effective grant (a grant waiting for a subject's
            consent admits no set); empty when the item was not current. Never unioned.
        blocked_by (BlockedBy | Unset): Why an item is not current.
    """

    item: str
    current: bool
    audiences: list[ViewerAudience]
    blocked_by: BlockedBy | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        current = self.current

        audiences = []
        for audiences_item_data in self.audiences:
            audiences_item = audiences_item_data.to_dict()
            audiences.append(audiences_item)

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "current": current,
                "audiences": audiences,
            }
        )
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.viewer_audience import ViewerAudience  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        current = d.pop("current")

        audiences = []
        _audiences = d.pop("audiences")
        for audiences_item_data in _audiences:
            audiences_item = ViewerAudience.from_dict(audiences_item_data)

            audiences.append(audiences_item)

        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: BlockedBy | Unset
        if isinstance(_blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = BlockedBy.from_dict(_blocked_by)

        historical_viewer_sets = cls(
            item=item,
            current=current,
            audiences=audiences,
            blocked_by=blocked_by,
        )

        historical_viewer_sets.additional_properties = d
        return historical_viewer_sets

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
