from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Constraints")


@_attrs_define
class Constraints:
    """Time window `[not_before, not_after)`, a use count, and a CEL condition over the request's context. A condition is
    bounded (SPEC §2.6): at most 32 levels deep, 512 nodes, comprehensions nested two deep, and an estimated cost within
    the budget, else 422 `invalid_condition` naming the bound. Only CEL's core is supported (operators, `size`,
    `contains`, `startsWith`, `endsWith`, the conversions `int`, `uint`, `double`, `string`, `bool`, `bytes`, `dyn`,
    `type`, type names as values, and the macros `has`, `all`, `exists`, `exists_one`, `map`, `filter`): a call to
    anything else (`matches`, `timestamp`, `duration`, optional values) is refused with 422 `invalid_condition` naming
    the function; at each use the cost is estimated with the context's actual sizes and over the budget denies
    (`denied_condition_error`). Comprehension variables are not context variables.

        Attributes:
            not_before (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
                is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
                with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
            not_after (datetime.datetime | Unset): RFC 3339 instant with its zone: `Z` or a numeric offset such as `+01:00`
                is required (an instant without one is refused with 400 `invalid_request`, never read as UTC); responses use UTC
                with millisecond precision, e.g. `2026-01-01T00:00:00.000Z`.
            uses (int | Unset):
            condition (str | Unset):
    """

    not_before: datetime.datetime | Unset = UNSET
    not_after: datetime.datetime | Unset = UNSET
    uses: int | Unset = UNSET
    condition: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        not_before: str | Unset = UNSET
        if not isinstance(self.not_before, Unset):
            not_before = self.not_before.isoformat()

        not_after: str | Unset = UNSET
        if not isinstance(self.not_after, Unset):
            not_after = self.not_after.isoformat()

        uses = self.uses

        condition = self.condition

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if not_before is not UNSET:
            field_dict["not_before"] = not_before
        if not_after is not UNSET:
            field_dict["not_after"] = not_after
        if uses is not UNSET:
            field_dict["uses"] = uses
        if condition is not UNSET:
            field_dict["condition"] = condition

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _not_before = d.pop("not_before", UNSET)
        not_before: datetime.datetime | Unset
        if isinstance(_not_before, Unset):
            not_before = UNSET
        else:
            not_before = datetime.datetime.fromisoformat(_not_before)

        _not_after = d.pop("not_after", UNSET)
        not_after: datetime.datetime | Unset
        if isinstance(_not_after, Unset):
            not_after = UNSET
        else:
            not_after = datetime.datetime.fromisoformat(_not_after)

        uses = d.pop("uses", UNSET)

        condition = d.pop("condition", UNSET)

        constraints = cls(
            not_before=not_before,
            not_after=not_after,
            uses=uses,
            condition=condition,
        )

        return constraints
