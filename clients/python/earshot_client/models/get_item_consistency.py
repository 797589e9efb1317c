from enum import StrEnum


class GetItemConsistency(StrEnum):
    FULLY_CONSISTENT = "fully_consistent"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
