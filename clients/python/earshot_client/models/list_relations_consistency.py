from enum import StrEnum


class ListRelationsConsistency(StrEnum):
    FULLY_CONSISTENT = "fully_consistent"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
