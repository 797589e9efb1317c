from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audience_view import AudienceView
    from ..models.expand_response_historical import ExpandResponseHistorical


T = TypeVar("T", bound="ExpandResponse")


@_attrs_define
class ExpandResponse:
    """
    Attributes:
        item (str):
        audiences (list[AudienceView]): Every authorized audience, separately: the origin first, then each live grant.
            Empty when the answer is historical (it then authorizes nobody; the audiences of then are under `historical`).
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        historical (ExpandResponseHistorical | Unset): Historical answer (SPEC §2.6, an `at_exact` read whose answers
            may not be used now): the item and its authorized audiences as they were at `revision`, for audit only.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
    """

    item: str
    audiences: list[AudienceView]
    revision: int
    token: str
    historical: ExpandResponseHistorical | Unset = UNSET
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        audiences = []
        for audiences_item_data in self.audiences:
            audiences_item = audiences_item_data.to_dict()
            audiences.append(audiences_item)

        revision = self.revision

        token = self.token

        historical: dict[str, Any] | Unset = UNSET
        if not isinstance(self.historical, Unset):
            historical = self.historical.to_dict()

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "audiences": audiences,
                "revision": revision,
                "token": token,
            }
        )
        if historical is not UNSET:
            field_dict["historical"] = historical
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audience_view import AudienceView  # noqa: PLC0415
        from ..models.expand_response_historical import ExpandResponseHistorical  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        audiences = []
        _audiences = d.pop("audiences")
        for audiences_item_data in _audiences:
            audiences_item = AudienceView.from_dict(audiences_item_data)

            audiences.append(audiences_item)

        revision = d.pop("revision")

        token = d.pop("token")

        _historical = d.pop("historical", UNSET)
        historical: ExpandResponseHistorical | Unset
        if isinstance(_historical, Unset):
            historical = UNSET
        else:
            historical = ExpandResponseHistorical.from_dict(_historical)

        latest_revision = d.pop("latest_revision", UNSET)

        expand_response = cls(
            item=item,
            audiences=audiences,
            revision=revision,
            token=token,
            historical=historical,
            latest_revision=latest_revision,
        )

        expand_response.additional_properties = d
        return expand_response

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
