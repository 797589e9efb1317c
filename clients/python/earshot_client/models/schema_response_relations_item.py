from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.schema_response_relations_item_opens_item import SchemaResponseRelationsItemOpensItem


T = TypeVar("T", bound="SchemaResponseRelationsItem")


@_attrs_define
class SchemaResponseRelationsItem:
    """
    Attributes:
        name (str):
        includes (list[str]):
        opens (list[SchemaResponseRelationsItemOpensItem]):
        edges (int):
    """

    name: str
    includes: list[str]
    opens: list[SchemaResponseRelationsItemOpensItem]
    edges: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        includes = self.includes

        opens = []
        for opens_item_data in self.opens:
            opens_item = opens_item_data.to_dict()
            opens.append(opens_item)

        edges = self.edges

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "includes": includes,
                "opens": opens,
                "edges": edges,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schema_response_relations_item_opens_item import SchemaResponseRelationsItemOpensItem  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        includes = cast(list[str], d.pop("includes"))

        opens = []
        _opens = d.pop("opens")
        for opens_item_data in _opens:
            opens_item = SchemaResponseRelationsItemOpensItem.from_dict(opens_item_data)

            opens.append(opens_item)

        edges = d.pop("edges")

        schema_response_relations_item = cls(
            name=name,
            includes=includes,
            opens=opens,
            edges=edges,
        )

        schema_response_relations_item.additional_properties = d
        return schema_response_relations_item

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
