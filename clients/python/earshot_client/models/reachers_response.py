from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.reacher import Reacher


T = TypeVar("T", bound="ReachersResponse")


@_attrs_define
class ReachersResponse:
    """
    Attributes:
        device (str):
        path (str):
        action (str):
        principals (list[Reacher]): Every principal `authorize` allows, by id, with the authority it would use; in a
            historical answer, those allowed at `revision`, each as history (`allowed: false`).
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
    """

    device: str
    path: str
    action: str
    principals: list[Reacher]
    revision: int
    token: str
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        device = self.device

        path = self.path

        action = self.action

        principals = []
        for principals_item_data in self.principals:
            principals_item = principals_item_data.to_dict()
            principals.append(principals_item)

        revision = self.revision

        token = self.token

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "device": device,
                "path": path,
                "action": action,
                "principals": principals,
                "revision": revision,
                "token": token,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reacher import Reacher  # noqa: PLC0415

        d = dict(src_dict)
        device = d.pop("device")

        path = d.pop("path")

        action = d.pop("action")

        principals = []
        _principals = d.pop("principals")
        for principals_item_data in _principals:
            principals_item = Reacher.from_dict(principals_item_data)

            principals.append(principals_item)

        revision = d.pop("revision")

        token = d.pop("token")

        latest_revision = d.pop("latest_revision", UNSET)

        reachers_response = cls(
            device=device,
            path=path,
            action=action,
            principals=principals,
            revision=revision,
            token=token,
            latest_revision=latest_revision,
        )

        reachers_response.additional_properties = d
        return reachers_response

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
