from enum import StrEnum


class ReadyStatus(StrEnum):
    DEGRADED = "degraded"
    DRAINING = "draining"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
