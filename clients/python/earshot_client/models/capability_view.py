from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.constraints_view import ConstraintsView


T = TypeVar("T", bound="CapabilityView")


@_attrs_define
class CapabilityView:
    """
    Attributes:
        id (str):
        holder (str):
        issuer (str):
        device (str):
        paths (list[str]):
        actions (list[str]):
        constraints (ConstraintsView):
        depth (int):
        revoked (bool): Whether this capability itself was revoked. A descendant of a revoked capability stays `false`
            here and names it in `invalidated_by`.
        created_revision (int):
        uses_left (int | Unset):
        parent (str | Unset):
        invalidated_by (str | Unset): Present when an ancestor is revoked: the nearest revoked ancestor. The capability
            is then invalidated through it (it authorizes nothing, `denied_revoked`) though not itself revoked.
    """

    id: str
    holder: str
    issuer: str
    device: str
    paths: list[str]
    actions: list[str]
    constraints: ConstraintsView
    depth: int
    revoked: bool
    created_revision: int
    uses_left: int | Unset = UNSET
    parent: str | Unset = UNSET
    invalidated_by: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        holder = self.holder

        issuer = self.issuer

        device = self.device

        paths = self.paths

        actions = self.actions

        constraints = self.constraints.to_dict()

        depth = self.depth

        revoked = self.revoked

        created_revision = self.created_revision

        uses_left = self.uses_left

        parent = self.parent

        invalidated_by = self.invalidated_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "holder": holder,
                "issuer": issuer,
                "device": device,
                "paths": paths,
                "actions": actions,
                "constraints": constraints,
                "depth": depth,
                "revoked": revoked,
                "created_revision": created_revision,
            }
        )
        if uses_left is not UNSET:
            field_dict["uses_left"] = uses_left
        if parent is not UNSET:
            field_dict["parent"] = parent
        if invalidated_by is not UNSET:
            field_dict["invalidated_by"] = invalidated_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.constraints_view import ConstraintsView  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        holder = d.pop("holder")

        issuer = d.pop("issuer")

        device = d.pop("device")

        paths = cast(list[str], d.pop("paths"))

        actions = cast(list[str], d.pop("actions"))

        constraints = ConstraintsView.from_dict(d.pop("constraints"))

        depth = d.pop("depth")

        revoked = d.pop("revoked")

        created_revision = d.pop("created_revision")

        uses_left = d.pop("uses_left", UNSET)

        parent = d.pop("parent", UNSET)

        invalidated_by = d.pop("invalidated_by", UNSET)

        capability_view = cls(
            id=id,
            holder=holder,
            issuer=issuer,
            device=device,
            paths=paths,
            actions=actions,
            constraints=constraints,
            depth=depth,
            revoked=revoked,
            created_revision=created_revision,
            uses_left=uses_left,
            parent=parent,
            invalidated_by=invalidated_by,
        )

        capability_view.additional_properties = d
        return capability_view

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
