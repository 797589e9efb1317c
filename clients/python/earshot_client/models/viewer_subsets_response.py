from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.historical_reason import HistoricalReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.blocked_by import BlockedBy
    from ..models.historical_viewer_subsets import HistoricalViewerSubsets
    from ..models.viewer_subsets import ViewerSubsets


T = TypeVar("T", bound="ViewerSubsetsResponse")


@_attrs_define
class ViewerSubsetsResponse:
    """
    Attributes:
        item (str):
        current (bool): False when the item is not current, and in a historical answer.
        admitted_together (bool): One audience holds every given participant (a set split across two audiences is not
            admitted). False in a historical answer.
        unknown (list[str]):
        audiences (list[ViewerSubsets]): Origin first, then each effective grant (a grant waiting for a subject's
            consent admits no set); empty when the item is not current, and in a historical answer.
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
        reason (HistoricalReason | Unset): The reason of an answer read at a revision older than the newest (SPEC §2.6):
            it admits and allows nothing.
        historical (HistoricalViewerSubsets | Unset): The given participants split per audience as at an older revision
            (for audit only).
    """

    item: str
    current: bool
    admitted_together: bool
    unknown: list[str]
    audiences: list[ViewerSubsets]
    revision: int
    token: str
    blocked_by: BlockedBy | Unset = UNSET
    latest_revision: int | Unset = UNSET
    reason: HistoricalReason | Unset = UNSET
    historical: HistoricalViewerSubsets | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        current = self.current

        admitted_together = self.admitted_together

        unknown = self.unknown

        audiences = []
        for audiences_item_data in self.audiences:
            audiences_item = audiences_item_data.to_dict()
            audiences.append(audiences_item)

        revision = self.revision

        token = self.token

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        latest_revision = self.latest_revision

        reason: str | Unset = UNSET
        if not isinstance(self.reason, Unset):
            reason = self.reason.value

        historical: dict[str, Any] | Unset = UNSET
        if not isinstance(self.historical, Unset):
            historical = self.historical.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "current": current,
                "admitted_together": admitted_together,
                "unknown": unknown,
                "audiences": audiences,
                "revision": revision,
                "token": token,
            }
        )
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision
        if reason is not UNSET:
            field_dict["reason"] = reason
        if historical is not UNSET:
            field_dict["historical"] = historical

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.historical_viewer_subsets import HistoricalViewerSubsets  # noqa: PLC0415
        from ..models.viewer_subsets import ViewerSubsets  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        current = d.pop("current")

        admitted_together = d.pop("admitted_together")

        unknown = cast(list[str], d.pop("unknown"))

        audiences = []
        _audiences = d.pop("audiences")
        for audiences_item_data in _audiences:
            audiences_item = ViewerSubsets.from_dict(audiences_item_data)

            audiences.append(audiences_item)

        revision = d.pop("revision")

        token = d.pop("token")

        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: BlockedBy | Unset
        if isinstance(_blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = BlockedBy.from_dict(_blocked_by)

        latest_revision = d.pop("latest_revision", UNSET)

        _reason = d.pop("reason", UNSET)
        reason: HistoricalReason | Unset
        if isinstance(_reason, Unset):
            reason = UNSET
        else:
            reason = HistoricalReason(_reason)

        _historical = d.pop("historical", UNSET)
        historical: HistoricalViewerSubsets | Unset
        if isinstance(_historical, Unset):
            historical = UNSET
        else:
            historical = HistoricalViewerSubsets.from_dict(_historical)

        viewer_subsets_response = cls(
            item=item,
            current=current,
            admitted_together=admitted_together,
            unknown=unknown,
            audiences=audiences,
            revision=revision,
            token=token,
            blocked_by=blocked_by,
            latest_revision=latest_revision,
            reason=reason,
            historical=historical,
        )

        viewer_subsets_response.additional_properties = d
        return viewer_subsets_response

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
