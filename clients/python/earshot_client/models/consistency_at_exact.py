from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConsistencyAtExact")


@_attrs_define
class ConsistencyAtExact:
    """
    Attributes:
        at_exact (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex
            digits>`). Pass it back as `at_least` or `at_exact`; a malformed token is refused with
            `invalid_consistency_token`, a token of another store with `consistency_token_store_mismatch`.
    """

    at_exact: str

    def to_dict(self) -> dict[str, Any]:
        at_exact = self.at_exact

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at_exact": at_exact,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at_exact = d.pop("at_exact")

        consistency_at_exact = cls(
            at_exact=at_exact,
        )

        return consistency_at_exact
