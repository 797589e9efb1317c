from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.write_outcome_outcome import WriteOutcomeOutcome
from ..models.write_outcome_reason import WriteOutcomeReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.authorize_decision import AuthorizeDecision


T = TypeVar("T", bound="WriteOutcome")


@_attrs_define
class WriteOutcome:
    """What a write produced.

    Attributes:
        outcome (WriteOutcomeOutcome):
        revision (int): The revision the write committed, or the latest revision when nothing was written.
        token (str): Opaque consistency token naming one revision of one store (currently `<revision>.<16 hex digits>`).
            Pass it back as `at_least` or `at_exact`; a malformed token is refused with `invalid_consistency_token`, a token
            of another store with `consistency_token_store_mismatch`.
        ids (list[str] | Unset): Ids created or changed (items, participants, grants; `transport:identifier` for an
            identity). Absent when empty.
        invalidated (list[str] | Unset): Revoking a capability: the descendants this revocation invalidates, those valid
            through the revoked one until now (no link of their chain revoked yet). The revoked one alone is in `ids`; they
            stay unrevoked themselves, and their chain view names it as `invalidated_by`. Removing a participant: every
            capability the removal made invalid, those it held (revoked now) and those below them, in creation order. Absent
            when empty.
        already_invalid (list[str] | Unset): Revoking a capability only: the descendants that were already invalid
            through an earlier revocation (revoked themselves, or below a revoked link, the revoked capability's ancestors
            included); this revocation changes nothing for them. In creation order. Absent when empty.
        reason (WriteOutcomeReason | Unset): Derivations: why it was suppressed or quarantined; a quarantine always
            carries one (`requested` when nothing would have suppressed the derivation, as for the `suppress` disposition).
            Grants, declassifications and consent decisions: `consent_pending` while the grant still waits for a subject's
            consent (SPEC §6.3; it admits nothing until then).
        source (str | Unset): Derivations only: the source that caused suppression or quarantine.
        decision (AuthorizeDecision | Unset):
    """

    outcome: WriteOutcomeOutcome
    revision: int
    token: str
    ids: list[str] | Unset = UNSET
    invalidated: list[str] | Unset = UNSET
    already_invalid: list[str] | Unset = UNSET
    reason: WriteOutcomeReason | Unset = UNSET
    source: str | Unset = UNSET
    decision: AuthorizeDecision | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome.value

        revision = self.revision

        token = self.token

        ids: list[str] | Unset = UNSET
        if not isinstance(self.ids, Unset):
            ids = self.ids

        invalidated: list[str] | Unset = UNSET
        if not isinstance(self.invalidated, Unset):
            invalidated = self.invalidated

        already_invalid: list[str] | Unset = UNSET
        if not isinstance(self.already_invalid, Unset):
            already_invalid = self.already_invalid

        reason: str | Unset = UNSET
        if not isinstance(self.reason, Unset):
            reason = self.reason.value

        source = self.source

        decision: dict[str, Any] | Unset = UNSET
        if not isinstance(self.decision, Unset):
            decision = self.decision.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome": outcome,
                "revision": revision,
                "token": token,
            }
        )
        if ids is not UNSET:
            field_dict["ids"] = ids
        if invalidated is not UNSET:
            field_dict["invalidated"] = invalidated
        if already_invalid is not UNSET:
            field_dict["already_invalid"] = already_invalid
        if reason is not UNSET:
            field_dict["reason"] = reason
        if source is not UNSET:
            field_dict["source"] = source
        if decision is not UNSET:
            field_dict["decision"] = decision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authorize_decision import AuthorizeDecision  # noqa: PLC0415

        d = dict(src_dict)
        outcome = WriteOutcomeOutcome(d.pop("outcome"))

        revision = d.pop("revision")

        token = d.pop("token")

        ids = cast(list[str], d.pop("ids", UNSET))

        invalidated = cast(list[str], d.pop("invalidated", UNSET))

        already_invalid = cast(list[str], d.pop("already_invalid", UNSET))

        _reason = d.pop("reason", UNSET)
        reason: WriteOutcomeReason | Unset
        if isinstance(_reason, Unset):
            reason = UNSET
        else:
            reason = WriteOutcomeReason(_reason)

        source = d.pop("source", UNSET)

        _decision = d.pop("decision", UNSET)
        decision: AuthorizeDecision | Unset
        if isinstance(_decision, Unset):
            decision = UNSET
        else:
            decision = AuthorizeDecision.from_dict(_decision)

        write_outcome = cls(
            outcome=outcome,
            revision=revision,
            token=token,
            ids=ids,
            invalidated=invalidated,
            already_invalid=already_invalid,
            reason=reason,
            source=source,
            decision=decision,
        )

        write_outcome.additional_properties = d
        return write_outcome

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
