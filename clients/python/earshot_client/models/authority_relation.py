from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AuthorityRelation")


@_attrs_define
class AuthorityRelation:
    """
    Attributes:
        kind (Literal['relation']):
        edge (str):
        grantor (str):
        relation (str):
        grantee (str):
    """

    kind: Literal["relation"]
    edge: str
    grantor: str
    relation: str
    grantee: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        edge = self.edge

        grantor = self.grantor

        relation = self.relation

        grantee = self.grantee

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "edge": edge,
                "grantor": grantor,
                "relation": relation,
                "grantee": grantee,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal["relation"], d.pop("kind"))
        if kind != "relation":
            raise ValueError(f"kind must match const 'relation', got '{kind}'")

        edge = d.pop("edge")

        grantor = d.pop("grantor")

        relation = d.pop("relation")

        grantee = d.pop("grantee")

        authority_relation = cls(
            kind=kind,
            edge=edge,
            grantor=grantor,
            relation=relation,
            grantee=grantee,
        )

        authority_relation.additional_properties = d
        return authority_relation

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
