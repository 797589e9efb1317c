from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.auth_reason import AuthReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.auth_failure import AuthFailure
    from ..models.authority_capability import AuthorityCapability
    from ..models.authority_owner import AuthorityOwner
    from ..models.authority_relation import AuthorityRelation
    from ..models.authorize_decision import AuthorizeDecision


T = TypeVar("T", bound="AuthorizeResponse")


@_attrs_define
class AuthorizeResponse:
    """
    Attributes:
        allowed (bool):
        reason (AuthReason):
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        authority (AuthorityCapability | AuthorityOwner | AuthorityRelation | Unset): The authority a decision used (or,
            on a denial by a failing link, would have used).
        failure (AuthFailure | Unset):
        historical (AuthorizeDecision | Unset):
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
    """

    allowed: bool
    reason: AuthReason
    revision: int
    token: str
    authority: AuthorityCapability | AuthorityOwner | AuthorityRelation | Unset = UNSET
    failure: AuthFailure | Unset = UNSET
    historical: AuthorizeDecision | Unset = UNSET
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.authority_owner import AuthorityOwner  # noqa: PLC0415
        from ..models.authority_relation import AuthorityRelation  # noqa: PLC0415

        allowed = self.allowed

        reason = self.reason.value

        revision = self.revision

        token = self.token

        authority: dict[str, Any] | Unset
        if isinstance(self.authority, Unset):
            authority = UNSET
        elif isinstance(self.authority, AuthorityOwner):
            authority = self.authority.to_dict()
        elif isinstance(self.authority, AuthorityRelation):
            authority = self.authority.to_dict()
        else:
            authority = self.authority.to_dict()

        failure: dict[str, Any] | Unset = UNSET
        if not isinstance(self.failure, Unset):
            failure = self.failure.to_dict()

        historical: dict[str, Any] | Unset = UNSET
        if not isinstance(self.historical, Unset):
            historical = self.historical.to_dict()

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed": allowed,
                "reason": reason,
                "revision": revision,
                "token": token,
            }
        )
        if authority is not UNSET:
            field_dict["authority"] = authority
        if failure is not UNSET:
            field_dict["failure"] = failure
        if historical is not UNSET:
            field_dict["historical"] = historical
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.auth_failure import AuthFailure  # noqa: PLC0415
        from ..models.authority_capability import AuthorityCapability  # noqa: PLC0415
        from ..models.authority_owner import AuthorityOwner  # noqa: PLC0415
        from ..models.authority_relation import AuthorityRelation  # noqa: PLC0415
        from ..models.authorize_decision import AuthorizeDecision  # noqa: PLC0415

        d = dict(src_dict)
        allowed = d.pop("allowed")

        reason = AuthReason(d.pop("reason"))

        revision = d.pop("revision")

        token = d.pop("token")

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

        _failure = d.pop("failure", UNSET)
        failure: AuthFailure | Unset
        if isinstance(_failure, Unset):
            failure = UNSET
        else:
            failure = AuthFailure.from_dict(_failure)

        _historical = d.pop("historical", UNSET)
        historical: AuthorizeDecision | Unset
        if isinstance(_historical, Unset):
            historical = UNSET
        else:
            historical = AuthorizeDecision.from_dict(_historical)

        latest_revision = d.pop("latest_revision", UNSET)

        authorize_response = cls(
            allowed=allowed,
            reason=reason,
            revision=revision,
            token=token,
            authority=authority,
            failure=failure,
            historical=historical,
            latest_revision=latest_revision,
        )

        authorize_response.additional_properties = d
        return authorize_response

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
