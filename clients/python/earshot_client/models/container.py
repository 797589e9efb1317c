from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.viewers import Viewers


T = TypeVar("T", bound="Container")


@_attrs_define
class Container:
    """A container: one conversation turn or model attempt.

    Attributes:
        owner (str): The acting owner. An unknown owner makes the container unresolved.
        viewers (Viewers | Unset): Viewer evidence: participant ids and/or transport identities (together at most 256,
            else `limit_exceeded`), plus a quality. The acting owner is always added. If anything fails to resolve, or the
            quality is not `fresh`, the viewers are unresolved (everyone, including the anonymous participant).
    """

    owner: str
    viewers: Viewers | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        owner = self.owner

        viewers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.viewers, Unset):
            viewers = self.viewers.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "owner": owner,
            }
        )
        if viewers is not UNSET:
            field_dict["viewers"] = viewers

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.viewers import Viewers  # noqa: PLC0415

        d = dict(src_dict)
        owner = d.pop("owner")

        _viewers = d.pop("viewers", UNSET)
        viewers: Viewers | Unset
        if isinstance(_viewers, Unset):
            viewers = UNSET
        else:
            viewers = Viewers.from_dict(_viewers)

        container = cls(
            owner=owner,
            viewers=viewers,
        )

        return container
