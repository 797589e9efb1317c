from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NewIdentity")


@_attrs_define
class NewIdentity:
    """Binds a transport identity to a participant.

    Attributes:
        transport (str): e.g. `email`, `chat`, `sms`.
        identifier (str): e.g. `bob@example.com`; 1 to 256 bytes, no control characters.
        participant (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
    """

    transport: str
    identifier: str
    participant: str

    def to_dict(self) -> dict[str, Any]:
        transport = self.transport

        identifier = self.identifier

        participant = self.participant

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "transport": transport,
                "identifier": identifier,
                "participant": participant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        transport = d.pop("transport")

        identifier = d.pop("identifier")

        participant = d.pop("participant")

        new_identity = cls(
            transport=transport,
            identifier=identifier,
            participant=participant,
        )

        return new_identity
