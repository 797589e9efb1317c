from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.export_header_earshot_export import ExportHeaderEarshotExport
from ..types import UNSET, Unset

T = TypeVar("T", bound="ExportHeader")


@_attrs_define
class ExportHeader:
    """The first line of an export: the store's revision record.

    Attributes:
        earshot_export (ExportHeaderEarshotExport): The format version.
        store (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        revision (int):
        created_at_ms (int):
        name (str | Unset):
        committed_at_ms (int | Unset):
    """

    earshot_export: ExportHeaderEarshotExport
    store: str
    revision: int
    created_at_ms: int
    name: str | Unset = UNSET
    committed_at_ms: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        earshot_export = self.earshot_export.value

        store = self.store

        revision = self.revision

        created_at_ms = self.created_at_ms

        name = self.name

        committed_at_ms = self.committed_at_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "earshot_export": earshot_export,
                "store": store,
                "revision": revision,
                "created_at_ms": created_at_ms,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if committed_at_ms is not UNSET:
            field_dict["committed_at_ms"] = committed_at_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        earshot_export = ExportHeaderEarshotExport(d.pop("earshot_export"))

        store = d.pop("store")

        revision = d.pop("revision")

        created_at_ms = d.pop("created_at_ms")

        name = d.pop("name", UNSET)

        committed_at_ms = d.pop("committed_at_ms", UNSET)

        export_header = cls(
            earshot_export=earshot_export,
            store=store,
            revision=revision,
            created_at_ms=created_at_ms,
            name=name,
            committed_at_ms=committed_at_ms,
        )

        return export_header
