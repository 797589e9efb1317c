from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.export_end_earshot_export_end import ExportEndEarshotExportEnd


T = TypeVar("T", bound="ExportEnd")


@_attrs_define
class ExportEnd:
    """The last line of a complete export.

    Attributes:
        earshot_export_end (ExportEndEarshotExportEnd):
    """

    earshot_export_end: ExportEndEarshotExportEnd

    def to_dict(self) -> dict[str, Any]:
        earshot_export_end = self.earshot_export_end.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "earshot_export_end": earshot_export_end,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.export_end_earshot_export_end import ExportEndEarshotExportEnd  # noqa: PLC0415

        d = dict(src_dict)
        earshot_export_end = ExportEndEarshotExportEnd.from_dict(d.pop("earshot_export_end"))

        export_end = cls(
            earshot_export_end=earshot_export_end,
        )

        return export_end
