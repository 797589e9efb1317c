from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.export_record_kind import ExportRecordKind

if TYPE_CHECKING:
    from ..models.export_record_value import ExportRecordValue


T = TypeVar("T", bound="ExportRecord")


@_attrs_define
class ExportRecord:
    """One durable record. `key` is the record's id (for `identity`, `transport` NUL `identifier`; for `schema`, empty);
    `value` is the record as the datastore holds it (schema/records.md).

        Attributes:
            kind (ExportRecordKind):
            key (str):
            value (ExportRecordValue):
    """

    kind: ExportRecordKind
    key: str
    value: ExportRecordValue

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        key = self.key

        value = self.value.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kind": kind,
                "key": key,
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.export_record_value import ExportRecordValue  # noqa: PLC0415

        d = dict(src_dict)
        kind = ExportRecordKind(d.pop("kind"))

        key = d.pop("key")

        value = ExportRecordValue.from_dict(d.pop("value"))

        export_record = cls(
            kind=kind,
            key=key,
            value=value,
        )

        return export_record
