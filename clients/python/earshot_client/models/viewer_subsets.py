from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audience_kind import AudienceKind
from ..models.viewer_subsets_source import ViewerSubsetsSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="ViewerSubsets")


@_attrs_define
class ViewerSubsets:
    """
    Attributes:
        source (ViewerSubsetsSource):
        kind (AudienceKind):
        digest (str):
        admitted (list[str]): The given participants inside this audience: any container of viewers among them is
            admitted through it.
        outside (list[str]):
        all_ (bool):
        grant (str | Unset):
    """

    source: ViewerSubsetsSource
    kind: AudienceKind
    digest: str
    admitted: list[str]
    outside: list[str]
    all_: bool
    grant: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source = self.source.value

        kind = self.kind.value

        digest = self.digest

        admitted = self.admitted

        outside = self.outside

        all_ = self.all_

        grant = self.grant

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "source": source,
                "kind": kind,
                "digest": digest,
                "admitted": admitted,
                "outside": outside,
                "all": all_,
            }
        )
        if grant is not UNSET:
            field_dict["grant"] = grant

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        source = ViewerSubsetsSource(d.pop("source"))

        kind = AudienceKind(d.pop("kind"))

        digest = d.pop("digest")

        admitted = cast(list[str], d.pop("admitted"))

        outside = cast(list[str], d.pop("outside"))

        all_ = d.pop("all")

        grant = d.pop("grant", UNSET)

        viewer_subsets = cls(
            source=source,
            kind=kind,
            digest=digest,
            admitted=admitted,
            outside=outside,
            all_=all_,
            grant=grant,
        )

        viewer_subsets.additional_properties = d
        return viewer_subsets

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
