from enum import StrEnum


class State(StrEnum):
    ACTIVE = "active"
    DELETED = "deleted"
    FROZEN = "frozen"
    QUARANTINED = "quarantined"
    REVOKED = "revoked"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)
