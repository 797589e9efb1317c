from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.quality import Quality
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.identity import Identity


T = TypeVar("T", bound="Viewers")


@_attrs_define
class Viewers:
    """Viewer evidence: participant ids and/or transport identities (together at most 256, else `limit_exceeded`), plus a
    quality. The acting owner is always added. If anything fails to resolve, or the quality is not `fresh`, the viewers
    are unresolved (everyone, including the anonymous participant).

        Attributes:
            participants (list[str] | Unset): Participant ids present. An unknown id does not resolve.
            identities (list[Identity] | Unset):
            quality (Quality | Unset): How far the transport's report of who is present can be trusted. Anything but `fresh`
                makes the viewers unresolved.
    """

    participants: list[str] | Unset = UNSET
    identities: list[Identity] | Unset = UNSET
    quality: Quality | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        participants: list[str] | Unset = UNSET
        if not isinstance(self.participants, Unset):
            participants = self.participants

        identities: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.identities, Unset):
            identities = []
            for identities_item_data in self.identities:
                identities_item = identities_item_data.to_dict()
                identities.append(identities_item)

        quality: str | Unset = UNSET
        if not isinstance(self.quality, Unset):
            quality = self.quality.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if participants is not UNSET:
            field_dict["participants"] = participants
        if identities is not UNSET:
            field_dict["identities"] = identities
        if quality is not UNSET:
            field_dict["quality"] = quality

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.identity import Identity  # noqa: PLC0415

        d = dict(src_dict)
        participants = cast(list[str], d.pop("participants", UNSET))

        _identities = d.pop("identities", UNSET)
        identities: list[Identity] | Unset = UNSET
        if _identities is not UNSET:
            identities = []
            for identities_item_data in _identities:
                identities_item = Identity.from_dict(identities_item_data)

                identities.append(identities_item)

        _quality = d.pop("quality", UNSET)
        quality: Quality | Unset
        if isinstance(_quality, Unset):
            quality = UNSET
        else:
            quality = Quality(_quality)

        viewers = cls(
            participants=participants,
            identities=identities,
            quality=quality,
        )

        return viewers
