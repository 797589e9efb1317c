from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.constraints import Constraints


T = TypeVar("T", bound="NewCapability")


@_attrs_define
class NewCapability:
    """
    Attributes:
        issuer (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        holder (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        device (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        paths (list[str]):
        actions (list[str]):
        id (None | str | Unset):
        constraints (Constraints | None | Unset):
        parent (None | str | Unset): Absent for a root (issuer must own the device); otherwise the issuer must hold the
            parent.
    """

    issuer: str
    holder: str
    device: str
    paths: list[str]
    actions: list[str]
    id: None | str | Unset = UNSET
    constraints: Constraints | None | Unset = UNSET
    parent: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.constraints import Constraints  # noqa: PLC0415

        issuer = self.issuer

        holder = self.holder

        device = self.device

        paths = self.paths

        actions = self.actions

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        constraints: dict[str, Any] | None | Unset
        if isinstance(self.constraints, Unset):
            constraints = UNSET
        elif isinstance(self.constraints, Constraints):
            constraints = self.constraints.to_dict()
        else:
            constraints = self.constraints

        parent: None | str | Unset
        if isinstance(self.parent, Unset):
            parent = UNSET
        else:
            parent = self.parent

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "issuer": issuer,
                "holder": holder,
                "device": device,
                "paths": paths,
                "actions": actions,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if constraints is not UNSET:
            field_dict["constraints"] = constraints
        if parent is not UNSET:
            field_dict["parent"] = parent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.constraints import Constraints  # noqa: PLC0415

        d = dict(src_dict)
        issuer = d.pop("issuer")

        holder = d.pop("holder")

        device = d.pop("device")

        paths = cast(list[str], d.pop("paths"))

        actions = cast(list[str], d.pop("actions"))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_constraints(data: object) -> Constraints | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                constraints_type_0 = Constraints.from_dict(data)

                return constraints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Constraints | None | Unset, data)

        constraints = _parse_constraints(d.pop("constraints", UNSET))

        def _parse_parent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        parent = _parse_parent(d.pop("parent", UNSET))

        new_capability = cls(
            issuer=issuer,
            holder=holder,
            device=device,
            paths=paths,
            actions=actions,
            id=id,
            constraints=constraints,
            parent=parent,
        )

        return new_capability
