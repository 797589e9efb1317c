from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.consistency_at_exact import ConsistencyAtExact
    from ..models.consistency_at_least import ConsistencyAtLeast
    from ..models.container import Container


T = TypeVar("T", bound="CheckRequest")


@_attrs_define
class CheckRequest:
    """Give either `container` (with optional `consistency`) or `attempt` (the attempt's pinned container and snapshot);
    anything else is refused with `invalid_request`.

        Attributes:
            item (str): The item to decide; unknown is `item_not_found`.
            container (Container | None | Unset):
            attempt (None | str | Unset): An open attempt; its container and snapshot are used.
            consistency (ConsistencyAtExact | ConsistencyAtLeast | Literal['fully_consistent'] | Literal['latest'] | None |
                Unset):
    """

    item: str
    container: Container | None | Unset = UNSET
    attempt: None | str | Unset = UNSET
    consistency: (
        ConsistencyAtExact | ConsistencyAtLeast | Literal["fully_consistent"] | Literal["latest"] | None | Unset
    ) = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415

        item = self.item

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

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "item": item,
            }
        )
        if container is not UNSET:
            field_dict["container"] = container
        if attempt is not UNSET:
            field_dict["attempt"] = attempt
        if consistency is not UNSET:
            field_dict["consistency"] = consistency

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.consistency_at_exact import ConsistencyAtExact  # noqa: PLC0415
        from ..models.consistency_at_least import ConsistencyAtLeast  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415

        d = dict(src_dict)
        item = d.pop("item")

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

        check_request = cls(
            item=item,
            container=container,
            attempt=attempt,
            consistency=consistency,
        )

        return check_request
