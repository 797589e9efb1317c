from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container import Container
    from ..models.container_resolution import ContainerResolution
    from ..models.sealed_context import SealedContext


T = TypeVar("T", bound="AttemptResponse")


@_attrs_define
class AttemptResponse:
    """A model attempt: a pinned snapshot and container.

    Attributes:
        attempt (str): The attempt id (random).
        revision (int): The pinned revision.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        at (datetime.datetime): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00` is required (an
            instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC with
            millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
        container (Container): A container: one conversation turn or model attempt.
        resolved (bool): Whether the container's viewers resolved.
        resolution (ContainerResolution | Unset): Whether the container resolved and, when it did not, why. An
            unresolved container's viewers are everyone (`U`): fail-closed, it is admitted public items only. The first
            input at fault is reported, in request order: owner, viewer participants, viewer identities, quality.
        context (SealedContext | Unset): The exact context of one attempt, sealed when assembled.
    """

    attempt: str
    revision: int
    token: str
    at: datetime.datetime
    container: Container
    resolved: bool
    resolution: ContainerResolution | Unset = UNSET
    context: SealedContext | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        revision = self.revision

        token = self.token

        at = self.at.isoformat()

        container = self.container.to_dict()

        resolved = self.resolved

        resolution: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resolution, Unset):
            resolution = self.resolution.to_dict()

        context: dict[str, Any] | Unset = UNSET
        if not isinstance(self.context, Unset):
            context = self.context.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "revision": revision,
                "token": token,
                "at": at,
                "container": container,
                "resolved": resolved,
            }
        )
        if resolution is not UNSET:
            field_dict["resolution"] = resolution
        if context is not UNSET:
            field_dict["context"] = context

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container import Container  # noqa: PLC0415
        from ..models.container_resolution import ContainerResolution  # noqa: PLC0415
        from ..models.sealed_context import SealedContext  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        revision = d.pop("revision")

        token = d.pop("token")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        container = Container.from_dict(d.pop("container"))

        resolved = d.pop("resolved")

        _resolution = d.pop("resolution", UNSET)
        resolution: ContainerResolution | Unset
        if isinstance(_resolution, Unset):
            resolution = UNSET
        else:
            resolution = ContainerResolution.from_dict(_resolution)

        _context = d.pop("context", UNSET)
        context: SealedContext | Unset
        if isinstance(_context, Unset):
            context = UNSET
        else:
            context = SealedContext.from_dict(_context)

        attempt_response = cls(
            attempt=attempt,
            revision=revision,
            token=token,
            at=at,
            container=container,
            resolved=resolved,
            resolution=resolution,
            context=context,
        )

        attempt_response.additional_properties = d
        return attempt_response

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
