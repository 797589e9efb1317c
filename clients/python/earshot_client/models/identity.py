from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Identity")


@_attrs_define
class Identity:
    """A transport identity used as viewer evidence: an object (an array of its fields is refused with 400
    `invalid_request`). An unknown or ambiguous identity does not resolve.

        Attributes:
            transport (str):
            identifier (str):
    """

    transport: str
    identifier: str

    def to_dict(self) -> dict[str, Any]:
        transport = self.transport

        identifier = self.identifier

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "transport": transport,
                "identifier": identifier,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        transport = d.pop("transport")

        identifier = d.pop("identifier")

        identity = cls(
            transport=transport,
            identifier=identifier,
        )

        return identity
