from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DependentsResponse")


@_attrs_define
class DependentsResponse:
    """
    Attributes:
        capability (str):
        invalidates (list[str]): The descendants revoking the capability would newly invalidate: no link of their chain
            is revoked yet. In creation order.
        already_invalid (list[str]): The descendants already invalid through a revocation: revoked themselves, or below
            a revoked link (the capability itself or one of its ancestors included). Revoking the capability changes nothing
            for them. In creation order. Windows and use counts are not considered: they are judged at each use.
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        latest_revision (int | Unset): Read with `at_exact` at a revision whose answers may not be used now (older than
            the datastore's newest, or with a window opened or closed since it was written, SPEC §2.6): the newest revision.
            The answer is then the record as it was at `revision`.
    """

    capability: str
    invalidates: list[str]
    already_invalid: list[str]
    revision: int
    token: str
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        capability = self.capability

        invalidates = self.invalidates

        already_invalid = self.already_invalid

        revision = self.revision

        token = self.token

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "capability": capability,
                "invalidates": invalidates,
                "already_invalid": already_invalid,
                "revision": revision,
                "token": token,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        capability = d.pop("capability")

        invalidates = cast(list[str], d.pop("invalidates"))

        already_invalid = cast(list[str], d.pop("already_invalid"))

        revision = d.pop("revision")

        token = d.pop("token")

        latest_revision = d.pop("latest_revision", UNSET)

        dependents_response = cls(
            capability=capability,
            invalidates=invalidates,
            already_invalid=already_invalid,
            revision=revision,
            token=token,
            latest_revision=latest_revision,
        )

        dependents_response.additional_properties = d
        return dependents_response

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
