from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.data_reason import DataReason
from ..models.role import Role
from ..models.state import State
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes
    from ..models.audience_view import AudienceView
    from ..models.blocked_by import BlockedBy
    from ..models.grant_view import GrantView
    from ..models.untrusted_source import UntrustedSource


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
        role (Role): SPEC §6.2: `instruction` when the item's author is its owner or a participant the owner trusts (a
            live trust delegation) and every transitive source is trusted too; otherwise `data`: to be read, never obeyed.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        superseded_by (str | Unset):
        content (str | Unset):
        attributes (Attributes | Unset): Free-form attributes: at most 64 entries, names of 1 to 64 bytes, values a
            string, number or boolean of at most 1024 bytes as JSON. Violations are refused with `invalid_request` or
            `limit_exceeded`.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
        subjects (list[str] | Unset): The participants the item is about (SPEC §6.3), sorted; absent when none.
        author (str | Unset): The participant whose words the item carries (SPEC §6.2): the one the create named;
            without one, the owner when the origin audience is `{owner}` or public, and otherwise unknown (the field is then
            absent and the item is data, `author_unknown`); a derived item's is its owner.
        data_reason (DataReason | Unset): Why an item is data: its own author is not trusted by its owner; its author is
            unknown (written without an `author` in front of anyone besides its owner, judged at write time); its author has
            been removed from the store (a tombstone); a transitive source's author is not trusted or is unknown (named by
            `untrusted_source`); or its provenance could not be walked in full (more than 4,096 items: fail closed).
        untrusted_source (UntrustedSource | Unset): The transitive source that made a derived item data, and its
            untrusted author (the first met in a depth-first walk of the sources in their recorded order).
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
    role: Role
    blocked_by: BlockedBy | Unset = UNSET
    superseded_by: str | Unset = UNSET
    content: str | Unset = UNSET
    attributes: Attributes | Unset = UNSET
    latest_revision: int | Unset = UNSET
    subjects: list[str] | Unset = UNSET
    author: str | Unset = UNSET
    data_reason: DataReason | Unset = UNSET
    untrusted_source: UntrustedSource | Unset = UNSET
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

        role = self.role.value

        blocked_by: dict[str, Any] | Unset = UNSET
        if not isinstance(self.blocked_by, Unset):
            blocked_by = self.blocked_by.to_dict()

        superseded_by = self.superseded_by

        content = self.content

        attributes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.attributes, Unset):
            attributes = self.attributes.to_dict()

        latest_revision = self.latest_revision

        subjects: list[str] | Unset = UNSET
        if not isinstance(self.subjects, Unset):
            subjects = self.subjects

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
                "role": role,
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
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision
        if subjects is not UNSET:
            field_dict["subjects"] = subjects
        if author is not UNSET:
            field_dict["author"] = author
        if data_reason is not UNSET:
            field_dict["data_reason"] = data_reason
        if untrusted_source is not UNSET:
            field_dict["untrusted_source"] = untrusted_source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attributes import Attributes  # noqa: PLC0415
        from ..models.audience_view import AudienceView  # noqa: PLC0415
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.grant_view import GrantView  # noqa: PLC0415
        from ..models.untrusted_source import UntrustedSource  # noqa: PLC0415

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

        role = Role(d.pop("role"))

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

        latest_revision = d.pop("latest_revision", UNSET)

        subjects = cast(list[str], d.pop("subjects", UNSET))

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
            role=role,
            blocked_by=blocked_by,
            superseded_by=superseded_by,
            content=content,
            attributes=attributes,
            latest_revision=latest_revision,
            subjects=subjects,
            author=author,
            data_reason=data_reason,
            untrusted_source=untrusted_source,
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
