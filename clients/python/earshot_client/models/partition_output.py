from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes


T = TypeVar("T", bound="PartitionOutput")


@_attrs_define
class PartitionOutput:
    """One output of a partition.

    Attributes:
        sources (list[str]): Sources of this output, all with one audience (else `partition_mixed_audiences`); each
            source of the request goes to exactly one output.
        id (None | str | Unset): Output item id; generated when absent.
        content (None | str | Unset): At most 65536 bytes.
        attributes (Attributes | None | Unset):
        subjects (list[str] | Unset): Subjects named for this output beyond those it inherits: a derived item's subjects
            are the union of its sources' (SPEC §6.3); at most 32 in all.
    """

    sources: list[str]
    id: None | str | Unset = UNSET
    content: None | str | Unset = UNSET
    attributes: Attributes | None | Unset = UNSET
    subjects: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.attributes import Attributes  # noqa: PLC0415

        sources = self.sources

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content

        attributes: dict[str, Any] | None | Unset
        if isinstance(self.attributes, Unset):
            attributes = UNSET
        elif isinstance(self.attributes, Attributes):
            attributes = self.attributes.to_dict()
        else:
            attributes = self.attributes

        subjects: list[str] | Unset = UNSET
        if not isinstance(self.subjects, Unset):
            subjects = self.subjects

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "sources": sources,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if content is not UNSET:
            field_dict["content"] = content
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if subjects is not UNSET:
            field_dict["subjects"] = subjects

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attributes import Attributes  # noqa: PLC0415

        d = dict(src_dict)
        sources = cast(list[str], d.pop("sources"))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))

        def _parse_attributes(data: object) -> Attributes | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                attributes_type_0 = Attributes.from_dict(data)

                return attributes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Attributes | None | Unset, data)

        attributes = _parse_attributes(d.pop("attributes", UNSET))

        subjects = cast(list[str], d.pop("subjects", UNSET))

        partition_output = cls(
            sources=sources,
            id=id,
            content=content,
            attributes=attributes,
            subjects=subjects,
        )

        return partition_output
