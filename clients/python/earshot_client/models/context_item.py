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
    from ..models.untrusted_source import UntrustedSource


T = TypeVar("T", bound="ContextItem")


@_attrs_define
class ContextItem:
    """
    Attributes:
        rank (int):
        item (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        score (float): The ranking's score among the admissible candidates: BM25, the dense similarity, or the fused
            `hybrid` score.
        basis (Basis): Which authorized audience admitted the item: the origin audience or a grant.
        reason (Reason): The closed set of decision reasons.
        digest (str | Unset): SHA-256 (hex) of the item's content; absent for an item without content.
        grant (str | Unset): The admitting grant, when the basis is `grant`.
        content (str | Unset): The content; in the assembling response only, never in the sealed record.
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

    rank: int
    item: str
    score: float
    basis: Basis
    reason: Reason
    digest: str | Unset = UNSET
    grant: str | Unset = UNSET
    content: str | Unset = UNSET
    role: Role | Unset = UNSET
    author: str | Unset = UNSET
    data_reason: DataReason | Unset = UNSET
    untrusted_source: UntrustedSource | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rank = self.rank

        item = self.item

        score = self.score

        basis = self.basis.value

        reason = self.reason.value

        digest = self.digest

        grant = self.grant

        content = self.content

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
                "rank": rank,
                "item": item,
                "score": score,
                "basis": basis,
                "reason": reason,
            }
        )
        if digest is not UNSET:
            field_dict["digest"] = digest
        if grant is not UNSET:
            field_dict["grant"] = grant
        if content is not UNSET:
            field_dict["content"] = content
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
        from ..models.untrusted_source import UntrustedSource  # noqa: PLC0415

        d = dict(src_dict)
        rank = d.pop("rank")

        item = d.pop("item")

        score = d.pop("score")

        basis = Basis(d.pop("basis"))

        reason = Reason(d.pop("reason"))

        digest = d.pop("digest", UNSET)

        grant = d.pop("grant", UNSET)

        content = d.pop("content", UNSET)

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

        context_item = cls(
            rank=rank,
            item=item,
            score=score,
            basis=basis,
            reason=reason,
            digest=digest,
            grant=grant,
            content=content,
            role=role,
            author=author,
            data_reason=data_reason,
            untrusted_source=untrusted_source,
        )

        context_item.additional_properties = d
        return context_item

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
