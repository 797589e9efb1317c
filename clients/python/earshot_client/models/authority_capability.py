from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.chain_link import ChainLink


T = TypeVar("T", bound="AuthorityCapability")


@_attrs_define
class AuthorityCapability:
    """
    Attributes:
        kind (Literal['capability']):
        chain (list[ChainLink]): Root first.
    """

    kind: Literal["capability"]
    chain: list[ChainLink]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        chain = []
        for chain_item_data in self.chain:
            chain_item = chain_item_data.to_dict()
            chain.append(chain_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "chain": chain,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.chain_link import ChainLink  # noqa: PLC0415

        d = dict(src_dict)
        kind = cast(Literal["capability"], d.pop("kind"))
        if kind != "capability":
            raise ValueError(f"kind must match const 'capability', got '{kind}'")

        chain = []
        _chain = d.pop("chain")
        for chain_item_data in _chain:
            chain_item = ChainLink.from_dict(chain_item_data)

            chain.append(chain_item)

        authority_capability = cls(
            kind=kind,
            chain=chain,
        )

        authority_capability.additional_properties = d
        return authority_capability

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
