from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.trust_view import TrustView


T = TypeVar("T", bound="TrustPage")


@_attrs_define
class TrustPage:
    """Trust delegations in creation order.

    Attributes:
        results (list[TrustView]):
        revision (int): The revision every page element was read at.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        next_cursor (str | Unset): Present when more elements remain: pass it as `cursor` for the next page.
        latest_revision (int | Unset): The newest revision, when `revision` is older (an `at_exact` read).
    """

    results: list[TrustView]
    revision: int
    token: str
    next_cursor: str | Unset = UNSET
    latest_revision: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        revision = self.revision

        token = self.token

        next_cursor = self.next_cursor

        latest_revision = self.latest_revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "results": results,
                "revision": revision,
                "token": token,
            }
        )
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor
        if latest_revision is not UNSET:
            field_dict["latest_revision"] = latest_revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.trust_view import TrustView  # noqa: PLC0415

        d = dict(src_dict)
        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = TrustView.from_dict(results_item_data)

            results.append(results_item)

        revision = d.pop("revision")

        token = d.pop("token")

        next_cursor = d.pop("next_cursor", UNSET)

        latest_revision = d.pop("latest_revision", UNSET)

        trust_page = cls(
            results=results,
            revision=revision,
            token=token,
            next_cursor=next_cursor,
            latest_revision=latest_revision,
        )

        trust_page.additional_properties = d
        return trust_page

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
