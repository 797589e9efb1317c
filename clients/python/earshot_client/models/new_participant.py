from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.participant_kind import ParticipantKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="NewParticipant")


@_attrs_define
class NewParticipant:
    """
    Attributes:
        id (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        kind (ParticipantKind):
        name (None | str | Unset): Display name, at most 1024 bytes.
    """

    id: str
    kind: ParticipantKind
    name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "kind": kind,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = ParticipantKind(d.pop("kind"))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        new_participant = cls(
            id=id,
            kind=kind,
            name=name,
        )

        return new_participant
