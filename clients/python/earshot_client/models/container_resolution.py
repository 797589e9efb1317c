from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.container_resolution_reason import ContainerResolutionReason
from ..types import UNSET, Unset

T = TypeVar("T", bound="ContainerResolution")


@_attrs_define
class ContainerResolution:
    """Whether the container resolved and, when it did not, why. An unresolved container's viewers are everyone (`U`):
    fail-closed, it is admitted public items only. The first input at fault is reported, in request order: owner, viewer
    participants, viewer identities, quality.

        Attributes:
            resolved (bool):
            reason (ContainerResolutionReason | Unset): Absent when resolved. `unknown_owner`: the owner is not a
                participant; `unknown_participant`: a viewer participant id is not a participant; `unknown_identity`: a viewer
                identity is bound to no participant; `ambiguous_identity`: it is bound to more than one; `evidence_quality`: the
                quality is not `fresh`.
            detail (str | Unset): Absent when resolved. The input at fault, echoing only what the caller sent: `owner:
                <id>`, `viewers.participants[<index>]: <id>`, `viewers.identities[<index>]: <transport>:<identifier>` or
                `viewers.quality: <quality>`.
    """

    resolved: bool
    reason: ContainerResolutionReason | Unset = UNSET
    detail: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        resolved = self.resolved

        reason: str | Unset = UNSET
        if not isinstance(self.reason, Unset):
            reason = self.reason.value

        detail = self.detail

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "resolved": resolved,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason
        if detail is not UNSET:
            field_dict["detail"] = detail

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        resolved = d.pop("resolved")

        _reason = d.pop("reason", UNSET)
        reason: ContainerResolutionReason | Unset
        if isinstance(_reason, Unset):
            reason = UNSET
        else:
            reason = ContainerResolutionReason(_reason)

        detail = d.pop("detail", UNSET)

        container_resolution = cls(
            resolved=resolved,
            reason=reason,
            detail=detail,
        )

        return container_resolution
