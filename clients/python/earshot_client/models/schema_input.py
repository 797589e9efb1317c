from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SchemaInput")


@_attrs_define
class SchemaInput:
    """
    Attributes:
        schema (str): Schema text (README, 'Relations and capabilities'): `relation <name> { opens <pattern> [for
            <action>, …] | includes <relation> }`, `#` comments.
    """

    schema: str

    def to_dict(self) -> dict[str, Any]:
        schema = self.schema

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "schema": schema,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        schema = d.pop("schema")

        schema_input = cls(
            schema=schema,
        )

        return schema_input
