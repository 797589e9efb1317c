from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Replication")


@_attrs_define
class Replication:
    """How this replica stands against the shared datastore's head. `latest` reads here answer at `applied`; over
    PostgreSQL a replica polls the head every `follow_interval_ms` and replays the revision log, so `behind_revisions`
    is usually 0 and `behind_ms` the time since it last caught up while it is behind. On the embedded store always
    caught up.

        Attributes:
            applied (int): The revision this replica has applied.
            head (int): The datastore's head at the last poll.
            behind_revisions (int):
            behind_ms (int): Milliseconds since this replica was last caught up (0 when it is).
            replayed (int): Revisions applied here by replaying the log.
            rebuilds (int): Times the store was rebuilt from the records instead.
            last_poll_ms (int | Unset): Milliseconds since the last successful poll of the head; absent on the embedded
                store.
            poll_error (str | Unset): Why the last poll failed, if it did.
    """

    applied: int
    head: int
    behind_revisions: int
    behind_ms: int
    replayed: int
    rebuilds: int
    last_poll_ms: int | Unset = UNSET
    poll_error: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        applied = self.applied

        head = self.head

        behind_revisions = self.behind_revisions

        behind_ms = self.behind_ms

        replayed = self.replayed

        rebuilds = self.rebuilds

        last_poll_ms = self.last_poll_ms

        poll_error = self.poll_error

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "applied": applied,
                "head": head,
                "behind_revisions": behind_revisions,
                "behind_ms": behind_ms,
                "replayed": replayed,
                "rebuilds": rebuilds,
            }
        )
        if last_poll_ms is not UNSET:
            field_dict["last_poll_ms"] = last_poll_ms
        if poll_error is not UNSET:
            field_dict["poll_error"] = poll_error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        applied = d.pop("applied")

        head = d.pop("head")

        behind_revisions = d.pop("behind_revisions")

        behind_ms = d.pop("behind_ms")

        replayed = d.pop("replayed")

        rebuilds = d.pop("rebuilds")

        last_poll_ms = d.pop("last_poll_ms", UNSET)

        poll_error = d.pop("poll_error", UNSET)

        replication = cls(
            applied=applied,
            head=head,
            behind_revisions=behind_revisions,
            behind_ms=behind_ms,
            replayed=replayed,
            rebuilds=rebuilds,
            last_poll_ms=last_poll_ms,
            poll_error=poll_error,
        )

        return replication
