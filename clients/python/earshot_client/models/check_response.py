from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.basis import Basis
from ..models.reason import Reason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.blocked_by import BlockedBy
    from ..models.container_resolution import ContainerResolution
    from ..models.decision import Decision


T = TypeVar("T", bound="CheckResponse")


@_attrs_define
class CheckResponse:
    """
    Attributes:
        item (str):
        admitted (bool):
        reason (Reason): The closed set of decision reasons.
        revision (int): The revision the decision read.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        container (ContainerResolution): Whether the container resolved and, when it did not, why. An unresolved
            container's viewers are everyone (`U`): fail-closed, it is admitted public items only. The first input at fault
            is reported, in request order: owner, viewer participants, viewer identities, quality.
        basis (Basis | Unset): Which authorized audience admitted the item: the origin audience or a grant.
        grant (str | Unset): With basis `grant`: the admitting grant's id.
        blocked_by (BlockedBy | Unset): Why an item is not current.
        historical (Decision | Unset): The decision for one item and one container.
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
    """

    item: str
    admitted: bool
    reason: Reason
    revision: int
    token: str
    container: ContainerResolution
    basis: Basis | Unset = UNSET
    grant: str | Unset = UNSET
    blocked_by: BlockedBy | Unset = UNSET
    historical: Decision | Unset = UNSET
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        admitted = self.admitted

        reason = self.reason.value

        revision = self.revision

        token = self.token

        container = self.container.to_dict()

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

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "admitted": admitted,
                "reason": reason,
                "revision": revision,
                "token": token,
                "container": container,
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
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.blocked_by import BlockedBy  # noqa: PLC0415
        from ..models.container_resolution import ContainerResolution  # noqa: PLC0415
        from ..models.decision import Decision  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

        admitted = d.pop("admitted")

        reason = Reason(d.pop("reason"))

        revision = d.pop("revision")

        token = d.pop("token")

        container = ContainerResolution.from_dict(d.pop("container"))

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

        latest_revision = d.pop("latest_revision", UNSET)

        check_response = cls(
            item=item,
            admitted=admitted,
            reason=reason,
            revision=revision,
            token=token,
            container=container,
            basis=basis,
            grant=grant,
            blocked_by=blocked_by,
            historical=historical,
            latest_revision=latest_revision,
        )

        check_response.additional_properties = d
        return check_response

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
