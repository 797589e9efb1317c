from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.state import State
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audience_view import AudienceView
    from ..models.blocked_by import BlockedBy


T = TypeVar("T", bound="ItemSummary")


@_attrs_define
class ItemSummary:
    """
    Attributes:
        id (str):
        owner (str):
        state (State): Lifecycle state of an item.
        current (bool):
        audience (AudienceView): One authorized audience of an item.
        grants (list[str]): Ids of every grant of the item, live or not.
        sources (list[str]):
        created_revision (int):
        author (str | Unset): The participant whose words the item carries (SPEC §6.2), present only when it is not the
            owner.
        author_unknown (bool | Unset): Present (`true`) when the item's author is unknown (SPEC §6.2: written without an
            `author` in front of anyone besides its owner); `author` is then absent.
        author_removed (bool | Unset): Present (`true`) when `author` names a participant since removed (SPEC §1.8): a
            tombstone, never a participant created later with the same id.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        superseded_by (str | Unset):
    """

    id: str
    owner: str
    state: State
    current: bool
    audience: AudienceView
    grants: list[str]
    sources: list[str]
    created_revision: int
    author: str | Unset = UNSET
    author_unknown: bool | Unset = UNSET
    author_removed: bool | Unset = UNSET
    blocked_by: BlockedBy | Unset = UNSET
    superseded_by: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        owner = self.owner

        state = self.state.value

        current = self.current

        audience = self.audience.to_dict()

        grants = self.grants

        sources = self.sources

        created_revision = self.created_revision

        author = self.author

        author_unknown = self.author_unknown

        author_removed = self.author_removed

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        superseded_by = self.superseded_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "owner": owner,
                "state": state,
                "current": current,
                "audience": audience,
                "grants": grants,
                "sources": sources,
                "created_revision": created_revision,
            }
        )
        if author is not UNSET:
            field_dict["author"] = author
        if author_unknown is not UNSET:
            field_dict["author_unknown"] = author_unknown
        if author_removed is not UNSET:
            field_dict["author_removed"] = author_removed
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if superseded_by is not UNSET:
            field_dict["superseded_by"] = superseded_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audience_view import AudienceView  # noqa: PLC0415
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        owner = d.pop("owner")

        state = State(d.pop("state"))

        current = d.pop("current")

        audience = AudienceView.from_dict(d.pop("audience"))

        grants = cast(list[str], d.pop("grants"))

        sources = cast(list[str], d.pop("sources"))

        created_revision = d.pop("created_revision")

        author = d.pop("author", UNSET)

        author_unknown = d.pop("author_unknown", UNSET)

        author_removed = d.pop("author_removed", UNSET)

        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: BlockedBy | Unset
        if isinstance(_blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = BlockedBy.from_dict(_blocked_by)

        superseded_by = d.pop("superseded_by", UNSET)

        item_summary = cls(
            id=id,
            owner=owner,
            state=state,
            current=current,
            audience=audience,
            grants=grants,
            sources=sources,
            created_revision=created_revision,
            author=author,
            author_unknown=author_unknown,
            author_removed=author_removed,
            blocked_by=blocked_by,
            superseded_by=superseded_by,
        )

        item_summary.additional_properties = d
        return item_summary

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
