from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.auth_reason import AuthReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.authority_capability import AuthorityCapability
    from ..models.authority_owner import AuthorityOwner
    from ..models.authority_relation import AuthorityRelation


T = TypeVar("T", bound="Reacher")


@_attrs_define
class Reacher:
    """One principal `authorize` allows, decided as `authorize` decides it.

    Attributes:
        principal (str):
        allowed (bool): True at the newest revision; false in a historical answer.
        reason (AuthReason):
        authority (AuthorityCapability | AuthorityOwner | AuthorityRelation | Unset): The authority a decision used (or,
            on a denial by a failing link, would have used).
        historical (Reacher | Unset): One principal `authorize` allows, decided as `authorize` decides it.
    """

    principal: str
    allowed: bool
    reason: AuthReason
    authority: AuthorityCapability | AuthorityOwner | AuthorityRelation | Unset = UNSET
    historical: Reacher | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.authority_owner import AuthorityOwner  # noqa: PLC0415
        from ..models.authority_relation import AuthorityRelation  # noqa: PLC0415

        principal = self.principal

        allowed = self.allowed

        reason = self.reason.value

        authority: dict[str, Any] | Unset
        if isinstance(self.authority, Unset):
            authority = UNSET
        elif isinstance(self.authority, AuthorityOwner):
            authority = self.authority.to_dict()
        elif isinstance(self.authority, AuthorityRelation):
            authority = self.authority.to_dict()
        else:
            authority = self.authority.to_dict()

        historical: dict[str, Any] | Unset = UNSET
        if not isinstance(self.historical, Unset):
            historical = self.historical.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "principal": principal,
                "allowed": allowed,
                "reason": reason,
            }
        )
        if authority is not UNSET:
            field_dict["authority"] = authority
        if historical is not UNSET:
            field_dict["historical"] = historical

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authority_capability import AuthorityCapability  # noqa: PLC0415
        from ..models.authority_owner import AuthorityOwner  # noqa: PLC0415
        from ..models.authority_relation import AuthorityRelation  # noqa: PLC0415

        d = dict(src_dict)
        principal = d.pop("principal")

        allowed = d.pop("allowed")

        reason = AuthReason(d.pop("reason"))

        def _parse_authority(data: object) -> AuthorityCapability | AuthorityOwner | AuthorityRelation | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_authority_authority_owner = AuthorityOwner.from_dict(data)

                return componentsschemas_authority_authority_owner
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_authority_authority_relation = AuthorityRelation.from_dict(data)

                return componentsschemas_authority_authority_relation
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_authority_authority_capability = AuthorityCapability.from_dict(data)

            return componentsschemas_authority_authority_capability

        authority = _parse_authority(d.pop("authority", UNSET))

        _historical = d.pop("historical", UNSET)
        historical: Reacher | Unset
        if isinstance(_historical, Unset):
            historical = UNSET
        else:
            historical = Reacher.from_dict(_historical)

        reacher = cls(
            principal=principal,
            allowed=allowed,
            reason=reason,
            authority=authority,
            historical=historical,
        )

        reacher.additional_properties = d
        return reacher

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
