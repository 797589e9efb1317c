from enum import StrEnum


class Quality(StrEnum):
    CONFLICTING = "conflicting"
    FRESH = "fresh"
    LOW_CONFIDENCE = "low_confidence"
    STALE = "stale"

    def __str__(self) -> str:
        return str(self.value)
