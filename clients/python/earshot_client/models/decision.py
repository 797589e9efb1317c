from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.basis import Basis
from ..models.data_reason import DataReason
from ..models.reason import Reason
from ..models.role import Role
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.blocked_by import BlockedBy
    from ..models.untrusted_source import UntrustedSource


T = TypeVar("T", bound="Decision")


@_attrs_define
class Decision:
    """The decision for one item and one container.

    Attributes:
        item (str):
        admitted (bool):
        reason (Reason): The closed set of decision reasons.
        basis (Basis | Unset): Which authorized audience admitted the item: the origin audience or a grant.
        grant (str | Unset): With basis `grant`: the admitting grant's id.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        historical (Decision | Unset): The decision for one item and one container.
        role (Role | Unset): SPEC §6.2: `instruction` when the item's author is its owner or a participant the owner
            trusts (a live trust delegation) and every transitive source is trusted too; otherwise `data`: to be read, never
            obeyed.
        author (str | Unset): For data: the item's author (a derived item's author is its owner); absent when unknown
            (`data_reason: author_unknown`).
        data_reason (DataReason | Unset): Why an item is data: its own author is not trusted by its owner; its author is
            unknown (written without an `author` in front of anyone besides its owner, judged at write time); its author has
            been removed from the store (a tombstone); a transitive source's author is not trusted or is unknown (named by
            `untrusted_source`); or its provenance could not be walked in full (more than 4,096 items: fail closed).
        untrusted_source (UntrustedSource | Unset): The transitive source that made a derived item data, and its
            untrusted author (the first met in a depth-first walk of the sources in their recorded order).
    """

    item: str
    admitted: bool
    reason: Reason
    basis: Basis | Unset = UNSET
    grant: str | Unset = UNSET
    blocked_by: BlockedBy | Unset = UNSET
    historical: Decision | Unset = UNSET
    role: Role | Unset = UNSET
    author: str | Unset = UNSET
    data_reason: DataReason | Unset = UNSET
    untrusted_source: UntrustedSource | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        admitted = self.admitted

        reason = self.reason.value

        basis: str | Unset = UNSET
        if not isinstance(self.basis, Unset):
            basis = self.basis.value

        grant = self.grant

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        historical: dict[str, Any] | Unset = UNSET
        if not isinstance(self.historical, Unset):
            historical = self.historical.to_dict()

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        author = self.author

        data_reason: str | Unset = UNSET
        if not isinstance(self.data_reason, Unset):
            data_reason = self.data_reason.value

        untrusted_source: dict[str, Any] | Unset = UNSET
        if not isinstance(self.untrusted_source, Unset):
            untrusted_source = self.untrusted_source.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "admitted": admitted,
                "reason": reason,
            }
        )
        if basis is not UNSET:
            field_dict["basis"] = basis
        if grant is not UNSET:
            field_dict["grant"] = grant
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if historical is not UNSET:
            field_dict["historical"] = historical
        if role is not UNSET:
            field_dict["role"] = role
        if author is not UNSET:
            field_dict["author"] = author
        if data_reason is not UNSET:
            field_dict["data_reason"] = data_reason
        if untrusted_source is not UNSET:
            field_dict["untrusted_source"] = untrusted_source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.untrusted_source import UntrustedSource  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        admitted = d.pop("admitted")

        reason = Reason(d.pop("reason"))

        _basis = d.pop("basis", UNSET)
        basis: Basis | Unset
        if isinstance(_basis, Unset):
            basis = UNSET
        else:
            basis = Basis(_basis)

        grant = d.pop("grant", UNSET)

        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: BlockedBy | Unset
        if isinstance(_blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = BlockedBy.from_dict(_blocked_by)

        _historical = d.pop("historical", UNSET)
        historical: Decision | Unset
        if isinstance(_historical, Unset):
            historical = UNSET
        else:
            historical = Decision.from_dict(_historical)

        _role = d.pop("role", UNSET)
        role: Role | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = Role(_role)

        author = d.pop("author", UNSET)

        _data_reason = d.pop("data_reason", UNSET)
        data_reason: DataReason | Unset
        if isinstance(_data_reason, Unset):
            data_reason = UNSET
        else:
            data_reason = DataReason(_data_reason)

        _untrusted_source = d.pop("untrusted_source", UNSET)
        untrusted_source: UntrustedSource | Unset
        if isinstance(_untrusted_source, Unset):
            untrusted_source = UNSET
        else:
            untrusted_source = UntrustedSource.from_dict(_untrusted_source)

        decision = cls(
            item=item,
            admitted=admitted,
            reason=reason,
            basis=basis,
            grant=grant,
            blocked_by=blocked_by,
            historical=historical,
            role=role,
            author=author,
            data_reason=data_reason,
            untrusted_source=untrusted_source,
        )

        decision.additional_properties = d
        return decision

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
