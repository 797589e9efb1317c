from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.reach import Reach


T = TypeVar("T", bound="ReachableResponse")


@_attrs_define
class ReachableResponse:
    """
    Attributes:
        principal (str):
        reaches (list[Reach]): By device; in a historical answer, those of `revision`, each as history (`allowed:
            false`, covering nothing).
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
    """

    principal: str
    reaches: list[Reach]
    revision: int
    token: str
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        principal = self.principal

        reaches = []
        for reaches_item_data in self.reaches:
            reaches_item = reaches_item_data.to_dict()
            reaches.append(reaches_item)

        revision = self.revision

        token = self.token

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "principal": principal,
                "reaches": reaches,
                "revision": revision,
                "token": token,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reach import Reach  # noqa: PLC0415

        d = dict(src_dict)
        principal = d.pop("principal")

        reaches = []
        _reaches = d.pop("reaches")
        for reaches_item_data in _reaches:
            reaches_item = Reach.from_dict(reaches_item_data)

            reaches.append(reaches_item)

        revision = d.pop("revision")

        token = d.pop("token")

        latest_revision = d.pop("latest_revision", UNSET)

        reachable_response = cls(
            principal=principal,
            reaches=reaches,
            revision=revision,
            token=token,
            latest_revision=latest_revision,
        )

        reachable_response.additional_properties = d
        return reachable_response

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
