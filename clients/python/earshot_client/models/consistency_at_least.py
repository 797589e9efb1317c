from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConsistencyAtLeast")


@_attrs_define
class ConsistencyAtLeast:
    """
    Attributes:
        at_least (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex
            digits>`). Pass it back as `at_least` or `at_exact`; a malformed token is refused with
            `invalid_consistency_token`, a token of another store with `consistency_token_store_mismatch`.
    """

    at_least: str

    def to_dict(self) -> dict[str, Any]:
        at_least = self.at_least

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at_least": at_least,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at_least = d.pop("at_least")

        consistency_at_least = cls(
            at_least=at_least,
        )

        return consistency_at_least
