from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.constraints import Constraints


T = TypeVar("T", bound="NewRelation")


@_attrs_define
class NewRelation:
    """
    Attributes:
        grantor (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        relation (str):
        grantee (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        id (None | str | Unset):
        constraints (Constraints | None | Unset):
    """

    grantor: str
    relation: str
    grantee: str
    id: None | str | Unset = UNSET
    constraints: Constraints | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.constraints import Constraints  # noqa: PLC0415

        grantor = self.grantor

        relation = self.relation

        grantee = self.grantee

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

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "grantor": grantor,
                "relation": relation,
                "grantee": grantee,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if constraints is not UNSET:
            field_dict["constraints"] = constraints

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.constraints import Constraints  # noqa: PLC0415

        d = dict(src_dict)
        grantor = d.pop("grantor")

        relation = d.pop("relation")

        grantee = d.pop("grantee")

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

        new_relation = cls(
            grantor=grantor,
            relation=relation,
            grantee=grantee,
            id=id,
            constraints=constraints,
        )

        return new_relation
