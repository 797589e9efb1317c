from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container_resolution import ContainerResolution
    from ..models.decision import Decision


T = TypeVar("T", bound="BulkCheckResponse")


@_attrs_define
class BulkCheckResponse:
    """
    Attributes:
        results (list[Decision]): One decision per requested item, in request order.
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        container (ContainerResolution): Whether the container resolved and, when it did not, why. An unresolved
            container's viewers are everyone (`U`): fail-closed, it is admitted public items only. The first input at fault
            is reported, in request order: owner, viewer participants, viewer identities, quality.
        latest_revision (int | Unset): Present only when the answer is historical: the newest revision, which `revision`
            is older than.
    """

    results: list[Decision]
    revision: int
    token: str
    container: ContainerResolution
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        revision = self.revision

        token = self.token

        container = self.container.to_dict()

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "results": results,
                "revision": revision,
                "token": token,
                "container": container,
            }
        )
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container_resolution import ContainerResolution  # noqa: PLC0415
        from ..models.decision import Decision  # noqa: PLC0415

        d = dict(src_dict)
        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = Decision.from_dict(results_item_data)

            results.append(results_item)

        revision = d.pop("revision")

        token = d.pop("token")

        container = ContainerResolution.from_dict(d.pop("container"))

        latest_revision = d.pop("latest_revision", UNSET)

        bulk_check_response = cls(
            results=results,
            revision=revision,
            token=token,
            container=container,
            latest_revision=latest_revision,
        )

        bulk_check_response.additional_properties = d
        return bulk_check_response

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
