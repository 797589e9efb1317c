from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consistency_at_exact import ConsistencyAtExact
    from ..models.consistency_at_least import ConsistencyAtLeast
    from ..models.container import Container


T = TypeVar("T", bound="LookupRequest")


@_attrs_define
class LookupRequest:
    """Give either `container` (with optional `consistency`) or `attempt` (the attempt's pinned container and snapshot);
    anything else is refused with `invalid_request`.

        Attributes:
            container (Container | None | Unset):
            attempt (None | str | Unset): An open attempt; its container and snapshot are used.
            consistency (ConsistencyAtExact | ConsistencyAtLeast | Literal['fully_consistent'] | Literal['latest'] | None |
                Unset):
            owners (list[str] | Unset): Whose memories to search (a filter, not authorization); empty means the container's
                owner. Unknown owners match nothing.
            limit (int | None | Unset): Page size: 1 to 1000, default 100; 0 (or anything not a whole number) is 400
                `invalid_request`, above 1000 400 `limit_exceeded`. Default: 100.
            cursor (None | str | Unset): The `cursor` of the previous page.
    """

    container: Container | None | Unset = UNSET
    attempt: None | str | Unset = UNSET
    consistency: (
        ConsistencyAtExact | ConsistencyAtLeast | Literal["fully_consistent"] | Literal["latest"] | None | Unset
    ) = UNSET
    owners: list[str] | Unset = UNSET
    limit: int | None | Unset = 100
    cursor: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415

        container: dict[str, Any] | None | Unset
        if isinstance(self.container, Unset):
            container = UNSET
        elif isinstance(self.container, Container):
            container = self.container.to_dict()
        else:
            container = self.container

        attempt: None | str | Unset
        if isinstance(self.attempt, Unset):
            attempt = UNSET
        else:
            attempt = self.attempt

        consistency: dict[str, Any] | Literal["fully_consistent"] | Literal["latest"] | None | Unset
        if isinstance(self.consistency, Unset):
            consistency = UNSET
        elif isinstance(self.consistency, ConsistencyAtLeast):
            consistency = self.consistency.to_dict()
        elif isinstance(self.consistency, ConsistencyAtExact):
            consistency = self.consistency.to_dict()
        else:
            consistency = self.consistency

        owners: list[str] | Unset = UNSET
        if not isinstance(self.owners, Unset):
            owners = self.owners

        limit: int | None | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        cursor: None | str | Unset
        if isinstance(self.cursor, Unset):
            cursor = UNSET
        else:
            cursor = self.cursor

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if container is not UNSET:
            field_dict["container"] = container
        if attempt is not UNSET:
            field_dict["attempt"] = attempt
        if consistency is not UNSET:
            field_dict["consistency"] = consistency
        if owners is not UNSET:
            field_dict["owners"] = owners
        if limit is not UNSET:
            field_dict["limit"] = limit
        if cursor is not UNSET:
            field_dict["cursor"] = cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_container(data: object) -> Container | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                container_type_0 = Container.from_dict(data)

                return container_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Container | None | Unset, data)

        container = _parse_container(d.pop("container", UNSET))

        def _parse_attempt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attempt = _parse_attempt(d.pop("attempt", UNSET))

        def _parse_consistency(
            data: object,
        ) -> ConsistencyAtExact | ConsistencyAtLeast | Literal["fully_consistent"] | Literal["latest"] | None | Unset:
            if data is None:
                return data
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
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_consistency_consistency_at_exact = ConsistencyAtExact.from_dict(data)

                return componentsschemas_consistency_consistency_at_exact
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                ConsistencyAtExact
                | ConsistencyAtLeast
                | Literal["fully_consistent"]
                | Literal["latest"]
                | None
                | Unset,
                data,
            )

        consistency = _parse_consistency(d.pop("consistency", UNSET))

        owners = cast(list[str], d.pop("owners", UNSET))

        def _parse_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        def _parse_cursor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cursor = _parse_cursor(d.pop("cursor", UNSET))

        lookup_request = cls(
            container=container,
            attempt=attempt,
            consistency=consistency,
            owners=owners,
            limit=limit,
            cursor=cursor,
        )

        return lookup_request
