from enum import StrEnum


class Disposition(StrEnum):
    DECLASSIFICATION = "declassification"
    INTERSECTION = "intersection"
    PARTITION = "partition"
    QUARANTINE = "quarantine"
    SUPPRESS = "suppress"

    def __str__(self) -> str:
        return str(self.value)
