from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.schema_response_conflicts_item import SchemaResponseConflictsItem
    from ..models.schema_response_relations_item import SchemaResponseRelationsItem


T = TypeVar("T", bound="SchemaResponse")


@_attrs_define
class SchemaResponse:
    """
    Attributes:
        schema (str):
        relations (list[SchemaResponseRelationsItem]):
        unexercised (list[str]):
        conflicts (list[SchemaResponseConflictsItem]): Aggregation conflicts (SPEC §6.4), in the order written.
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
    """

    schema: str
    relations: list[SchemaResponseRelationsItem]
    unexercised: list[str]
    conflicts: list[SchemaResponseConflictsItem]
    revision: int
    token: str
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        schema = self.schema

        relations = []
        for relations_item_data in self.relations:
            relations_item = relations_item_data.to_dict()
            relations.append(relations_item)

        unexercised = self.unexercised

        conflicts = []
        for conflicts_item_data in self.conflicts:
            conflicts_item = conflicts_item_data.to_dict()
            conflicts.append(conflicts_item)

        revision = self.revision

        token = self.token

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "schema": schema,
                "relations": relations,
                "unexercised": unexercised,
                "conflicts": conflicts,
                "revision": revision,
                "token": token,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schema_response_conflicts_item import SchemaResponseConflictsItem  # noqa: PLC0415
        from ..models.schema_response_relations_item import SchemaResponseRelationsItem  # noqa: PLC0415

        d = dict(src_dict)
        schema = d.pop("schema")

        relations = []
        _relations = d.pop("relations")
        for relations_item_data in _relations:
            relations_item = SchemaResponseRelationsItem.from_dict(relations_item_data)

            relations.append(relations_item)

        unexercised = cast(list[str], d.pop("unexercised"))

        conflicts = []
        _conflicts = d.pop("conflicts")
        for conflicts_item_data in _conflicts:
            conflicts_item = SchemaResponseConflictsItem.from_dict(conflicts_item_data)

            conflicts.append(conflicts_item)

        revision = d.pop("revision")

        token = d.pop("token")

        latest_revision = d.pop("latest_revision", UNSET)

        schema_response = cls(
            schema=schema,
            relations=relations,
            unexercised=unexercised,
            conflicts=conflicts,
            revision=revision,
            token=token,
            latest_revision=latest_revision,
        )

        schema_response.additional_properties = d
        return schema_response

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
