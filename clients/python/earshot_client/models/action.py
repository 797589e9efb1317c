from enum import StrEnum


class Action(StrEnum):
    DELETE = "delete"
    FREEZE = "freeze"
    QUARANTINE = "quarantine"
    RELEASE = "release"
    REVOKE = "revoke"
    SUPERSEDE = "supersede"
    UNFREEZE = "unfreeze"

    def __str__(self) -> str:
        return str(self.value)
