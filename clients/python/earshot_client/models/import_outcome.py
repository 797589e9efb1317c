from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.import_outcome_outcome import ImportOutcomeOutcome

T = TypeVar("T", bound="ImportOutcome")


@_attrs_define
class ImportOutcome:
    """
    Attributes:
        outcome (ImportOutcomeOutcome):
        ids (list[str]):
        store (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        from_ (str): The store the export was taken from.
        records (int):
        revision (int):
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
    """

    outcome: ImportOutcomeOutcome
    ids: list[str]
    store: str
    from_: str
    records: int
    revision: int
    token: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome.value

        ids = self.ids

        store = self.store

        from_ = self.from_

        records = self.records

        revision = self.revision

        token = self.token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome": outcome,
                "ids": ids,
                "store": store,
                "from": from_,
                "records": records,
                "revision": revision,
                "token": token,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outcome = ImportOutcomeOutcome(d.pop("outcome"))

        ids = cast(list[str], d.pop("ids"))

        store = d.pop("store")

        from_ = d.pop("from")

        records = d.pop("records")

        revision = d.pop("revision")

        token = d.pop("token")

        import_outcome = cls(
            outcome=outcome,
            ids=ids,
            store=store,
            from_=from_,
            records=records,
            revision=revision,
            token=token,
        )

        import_outcome.additional_properties = d
        return import_outcome

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
