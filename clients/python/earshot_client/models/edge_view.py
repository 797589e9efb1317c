from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.constraints_view import ConstraintsView


T = TypeVar("T", bound="EdgeView")


@_attrs_define
class EdgeView:
    """
    Attributes:
        id (str):
        grantor (str):
        relation (str):
        grantee (str):
        constraints (ConstraintsView):
        revoked (bool):
        created_at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is
            required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
            with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        created_revision (int):
        uses_left (int | Unset):
    """

    id: str
    grantor: str
    relation: str
    grantee: str
    constraints: ConstraintsView
    revoked: bool
    created_at: datetime.datetime
    created_revision: int
    uses_left: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        grantor = self.grantor

        relation = self.relation

        grantee = self.grantee

        constraints = self.constraints.to_dict()

        revoked = self.revoked

        created_at = self.created_at.isoformat()

        created_revision = self.created_revision

        uses_left = self.uses_left

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "grantor": grantor,
                "relation": relation,
                "grantee": grantee,
                "constraints": constraints,
                "revoked": revoked,
                "created_at": created_at,
                "created_revision": created_revision,
            }
        )
        if uses_left is not UNSET:
            field_dict["uses_left"] = uses_left

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.constraints_view import ConstraintsView  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        grantor = d.pop("grantor")

        relation = d.pop("relation")

        grantee = d.pop("grantee")

        constraints = ConstraintsView.from_dict(d.pop("constraints"))

        revoked = d.pop("revoked")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_revision = d.pop("created_revision")

        uses_left = d.pop("uses_left", UNSET)

        edge_view = cls(
            id=id,
            grantor=grantor,
            relation=relation,
            grantee=grantee,
            constraints=constraints,
            revoked=revoked,
            created_at=created_at,
            created_revision=created_revision,
            uses_left=uses_left,
        )

        edge_view.additional_properties = d
        return edge_view

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
