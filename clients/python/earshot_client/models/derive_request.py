from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.disposition import Disposition
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes
    from ..models.partition_output import PartitionOutput
    from ..models.viewers import Viewers


T = TypeVar("T", bound="DeriveRequest")


@_attrs_define
class DeriveRequest:
    """A derivation. A field given to a disposition that does not take it is refused with `invalid_request`.
    `declassification` adds one grant to the single source and answers like the grants endpoint.

        Attributes:
            disposition (Disposition): The closed derivation dispositions (SPEC §1.5); `suppress` and `quarantine` are the
                two forms of the fourth.
            owner (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
                `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
                `invalid_id`.
            sources (list[str]): Existing items the derivation reads (their origin audiences, never their grants).
                Declassification names exactly one.
            id (None | str | Unset): Intersection or quarantine only: the new item's id (generated when absent).
            content (None | str | Unset): Intersection or quarantine only. At most 65536 bytes.
            attributes (Attributes | None | Unset): Intersection or quarantine only.
            container (None | Unset | Viewers): Viewers of the container the derivation was produced for; enables the
                suppress rule (SPEC §1.5).
            outputs (list[PartitionOutput] | None | Unset): Partition only (and required there).
            members (list[str] | None | Unset): Declassification only (and required there): the exact audience the grant
                adds.
            reason (None | str | Unset): Declassification only. At most 1024 bytes.
            expires_at (datetime.datetime | None | Unset): Declassification only; as a grant's `expires_at`, later than the
                time of the write, else 422 `window_in_the_past`.
            subjects (list[str] | Unset): Intersection or quarantine only: subjects named beyond those the new item inherits
                (the union of its sources' subjects, SPEC §6.3); at most 32 in all.
    """

    disposition: Disposition
    owner: str
    sources: list[str]
    id: None | str | Unset = UNSET
    content: None | str | Unset = UNSET
    attributes: Attributes | None | Unset = UNSET
    container: None | Unset | Viewers = UNSET
    outputs: list[PartitionOutput] | None | Unset = UNSET
    members: list[str] | None | Unset = UNSET
    reason: None | str | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    subjects: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.attributes import Attributes  # noqa: PLC0415
        from ..models.viewers import Viewers  # noqa: PLC0415

        disposition = self.disposition.value

        owner = self.owner

        sources = self.sources

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content

        attributes: dict[str, Any] | None | Unset
        if isinstance(self.attributes, Unset):
            attributes = UNSET
        elif isinstance(self.attributes, Attributes):
            attributes = self.attributes.to_dict()
        else:
            attributes = self.attributes

        container: dict[str, Any] | None | Unset
        if isinstance(self.container, Unset):
            container = UNSET
        elif isinstance(self.container, Viewers):
            container = self.container.to_dict()
        else:
            container = self.container

        outputs: list[dict[str, Any]] | None | Unset
        if isinstance(self.outputs, Unset):
            outputs = UNSET
        elif isinstance(self.outputs, list):
            outputs = []
            for outputs_type_0_item_data in self.outputs:
                outputs_type_0_item = outputs_type_0_item_data.to_dict()
                outputs.append(outputs_type_0_item)

        else:
            outputs = self.outputs

        members: list[str] | None | Unset
        if isinstance(self.members, Unset):
            members = UNSET
        elif isinstance(self.members, list):
            members = self.members

        else:
            members = self.members

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        subjects: list[str] | Unset = UNSET
        if not isinstance(self.subjects, Unset):
            subjects = self.subjects

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "disposition": disposition,
                "owner": owner,
                "sources": sources,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if content is not UNSET:
            field_dict["content"] = content
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if container is not UNSET:
            field_dict["container"] = container
        if outputs is not UNSET:
            field_dict["outputs"] = outputs
        if members is not UNSET:
            field_dict["members"] = members
        if reason is not UNSET:
            field_dict["reason"] = reason
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if subjects is not UNSET:
            field_dict["subjects"] = subjects

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attributes import Attributes  # noqa: PLC0415
        from ..models.partition_output import PartitionOutput  # noqa: PLC0415
        from ..models.viewers import Viewers  # noqa: PLC0415

        d = dict(src_dict)
        disposition = Disposition(d.pop("disposition"))

        owner = d.pop("owner")

        sources = cast(list[str], d.pop("sources"))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))

        def _parse_attributes(data: object) -> Attributes | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                attributes_type_0 = Attributes.from_dict(data)

                return attributes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Attributes | None | Unset, data)

        attributes = _parse_attributes(d.pop("attributes", UNSET))

        def _parse_container(data: object) -> None | Unset | Viewers:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                container_type_0 = Viewers.from_dict(data)

                return container_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | Viewers, data)

        container = _parse_container(d.pop("container", UNSET))

        def _parse_outputs(data: object) -> list[PartitionOutput] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                outputs_type_0 = []
                _outputs_type_0 = data
                for outputs_type_0_item_data in _outputs_type_0:
                    outputs_type_0_item = PartitionOutput.from_dict(outputs_type_0_item_data)

                    outputs_type_0.append(outputs_type_0_item)

                return outputs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[PartitionOutput] | None | Unset, data)

        outputs = _parse_outputs(d.pop("outputs", UNSET))

        def _parse_members(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                members_type_0 = cast(list[str], data)

                return members_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        members = _parse_members(d.pop("members", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        subjects = cast(list[str], d.pop("subjects", UNSET))

        derive_request = cls(
            disposition=disposition,
            owner=owner,
            sources=sources,
            id=id,
            content=content,
            attributes=attributes,
            container=container,
            outputs=outputs,
            members=members,
            reason=reason,
            expires_at=expires_at,
            subjects=subjects,
        )

        return derive_request
