from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.state import State
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes
    from ..models.audience_view import AudienceView
    from ..models.blocked_by import BlockedBy
    from ..models.grant_view import GrantView


T = TypeVar("T", bound="ItemView")


@_attrs_define
class ItemView:
    """The admin view of one item.

    Attributes:
        id (str):
        owner (str):
        state (State): Lifecycle state of an item.
        current (bool):
        audience (AudienceView): One authorized audience of an item.
        grants (list[GrantView]): Every grant, including revoked and expired ones.
        sources (list[str]):
        created_revision (int):
        revision (int): The revision this view read.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        superseded_by (str | Unset):
        content (str | Unset):
        attributes (Attributes | Unset): Free-form attributes: at most 64 entries, names of 1 to 64 bytes, values a
            string, number or boolean of at most 1024 bytes as JSON. Violations are refused with `invalid_request` or
            `limit_exceeded`.
        subjects (list[str] | Unset): The participants the item is about (SPEC §6.3), sorted; absent when none.
    """

    id: str
    owner: str
    state: State
    current: bool
    audience: AudienceView
    grants: list[GrantView]
    sources: list[str]
    created_revision: int
    revision: int
    token: str
    blocked_by: BlockedBy | Unset = UNSET
    superseded_by: str | Unset = UNSET
    content: str | Unset = UNSET
    attributes: Attributes | Unset = UNSET
    subjects: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        owner = self.owner

        state = self.state.value

        current = self.current

        audience = self.audience.to_dict()

        grants = []
        for grants_item_data in self.grants:
            grants_item = grants_item_data.to_dict()
            grants.append(grants_item)

        sources = self.sources

        created_revision = self.created_revision

        revision = self.revision

        token = self.token

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        superseded_by = self.superseded_by

        content = self.content

        attributes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.attributes, Unset):
            attributes = self.attributes.to_dict()

        subjects: list[str] | Unset = UNSET
        if not isinstance(self.subjects, Unset):
            subjects = self.subjects

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
                "revision": revision,
                "token": token,
            }
        )
        if blocked_by is not UNSET:
            field_dict["blocked_by"] = blocked_by
        if superseded_by is not UNSET:
            field_dict["superseded_by"] = superseded_by
        if content is not UNSET:
            field_dict["content"] = content
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if subjects is not UNSET:
            field_dict["subjects"] = subjects

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attributes import Attributes  # noqa: PLC0415
        from ..models.audience_view import AudienceView  # noqa: PLC0415
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.grant_view import GrantView  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        owner = d.pop("owner")

        state = State(d.pop("state"))

        current = d.pop("current")

        audience = AudienceView.from_dict(d.pop("audience"))

        grants = []
        _grants = d.pop("grants")
        for grants_item_data in _grants:
            grants_item = GrantView.from_dict(grants_item_data)

            grants.append(grants_item)

        sources = cast(list[str], d.pop("sources"))

        created_revision = d.pop("created_revision")

        revision = d.pop("revision")

        token = d.pop("token")

        _blocked_by = d.pop("blocked_by", UNSET)
        blocked_by: BlockedBy | Unset
        if isinstance(_blocked_by, Unset):
            blocked_by = UNSET
        else:
            blocked_by = BlockedBy.from_dict(_blocked_by)

        superseded_by = d.pop("superseded_by", UNSET)

        content = d.pop("content", UNSET)

        _attributes = d.pop("attributes", UNSET)
        attributes: Attributes | Unset
        if isinstance(_attributes, Unset):
            attributes = UNSET
        else:
            attributes = Attributes.from_dict(_attributes)

        subjects = cast(list[str], d.pop("subjects", UNSET))

        item_view = cls(
            id=id,
            owner=owner,
            state=state,
            current=current,
            audience=audience,
            grants=grants,
            sources=sources,
            created_revision=created_revision,
            revision=revision,
            token=token,
            blocked_by=blocked_by,
            superseded_by=superseded_by,
            content=content,
            attributes=attributes,
            subjects=subjects,
        )

        item_view.additional_properties = d
        return item_view

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
