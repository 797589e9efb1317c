from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consistency_at_exact import ConsistencyAtExact
    from ..models.consistency_at_least import ConsistencyAtLeast
    from ..models.request_context import RequestContext


T = TypeVar("T", bound="ReachableRequest")


@_attrs_define
class ReachableRequest:
    """
    Attributes:
        principal (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
        context (RequestContext | Unset): Variables for conditions, e.g. `{"human_in_cell": false}`. At most 64
            variables, else 400 `limit_exceeded` (`details.field` is `context`, `details.limit` 64); a total size of at most
            16,384 (1 per value plus the bytes of every string and key) and lists or maps nested at most 8 deep, else 400
            `invalid_request` naming the bound.
        consistency (ConsistencyAtExact | ConsistencyAtLeast | Literal['fully_consistent'] | Literal['latest'] | Unset):
            How a read picks its snapshot: `latest` (also the default when absent: the newest revision this replica has
            applied, which over a shared datastore may trail other replicas' writes by the follow interval, 50 ms by
            default), `fully_consistent` (the datastore's head is read first and waited for, bounded: everything committed
            on any replica before the read), at least the revision of a token (waits, bounded, for it to be published;
            `consistency_timeout` otherwise), or exactly that revision (`revision_expired` when it left the retention
            window). Exactly one of `at_least` and `at_exact`. Decisions are made on the newest state at the time of the
            request: an `at_exact` read is judged at the time recorded with its revision, so the same token always gives the
            same judgement, and it is historical, for audit only (its decisions never admit or allow, the decision of then
            is under `historical`, and `latest_revision` names the newest revision), when the revision is older than the
            datastore's newest or when a grant, edge, capability or aggregation window has opened or closed since it was
            written (`latest_revision` is then the revision itself). An attempt refuses such a revision
            (`revision_not_latest`).
    """

    principal: str
    context: RequestContext | Unset = UNSET
    consistency: ConsistencyAtExact | ConsistencyAtLeast | Literal["fully_consistent"] | Literal["latest"] | Unset = (
        UNSET
    )

    def to_dict(self) -> dict[str, Any]:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415

        principal = self.principal

        context: dict[str, Any] | Unset = UNSET
        if not isinstance(self.context, Unset):
            context = self.context.to_dict()

        consistency: dict[str, Any] | Literal["fully_consistent"] | Literal["latest"] | Unset
        if isinstance(self.consistency, Unset):
            consistency = UNSET
        elif isinstance(self.consistency, ConsistencyAtLeast):
            consistency = self.consistency.to_dict()
        elif isinstance(self.consistency, ConsistencyAtExact):
            consistency = self.consistency.to_dict()
        else:
            consistency = self.consistency

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "principal": principal,
            }
        )
        if context is not UNSET:
            field_dict["context"] = context
        if consistency is not UNSET:
            field_dict["consistency"] = consistency

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415
        from ..models.request_context import RequestContext  # noqa: PLC0415

        d = dict(src_dict)
        principal = d.pop("principal")

        _context = d.pop("context", UNSET)
        context: RequestContext | Unset
        if isinstance(_context, Unset):
            context = UNSET
        else:
            context = RequestContext.from_dict(_context)

        def _parse_consistency(
            data: object,
        ) -> ConsistencyAtExact | ConsistencyAtLeast | Literal["fully_consistent"] | Literal["latest"] | Unset:
            if isinstance(data, Unset):
                return data
            componentsschemas_consistency_type_0 = cast(Literal["latest"], data)
            if componentsschemas_consistency_type_0 != "latest":
                raise ValueError(
                    f"/components/schemas/Consistency_type_0 must match const 'latest', got '{componentsschemas_consistency_type_0}'"
                )
            return componentsschemas_consistency_type_0
            componentsschemas_consistency_type_1 = cast(Literal["fully_consistent"], data)
            if componentsschemas_consistency_type_1 != "fully_consistent":
                raise ValueError(
                    f"/components/schemas/Consistency_type_1 must match const 'fully_consistent', got '{componentsschemas_consistency_type_1}'"
                )
            return componentsschemas_consistency_type_1
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_consistency_consistency_at_least = ConsistencyAtLeast.from_dict(data)

                return componentsschemas_consistency_consistency_at_least
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_consistency_consistency_at_exact = ConsistencyAtExact.from_dict(data)

            return componentsschemas_consistency_consistency_at_exact

        consistency = _parse_consistency(d.pop("consistency", UNSET))

        reachable_request = cls(
            principal=principal,
            context=context,
            consistency=consistency,
        )

        return reachable_request
