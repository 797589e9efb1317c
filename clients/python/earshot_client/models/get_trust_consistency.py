from enum import StrEnum


class GetTrustConsistency(StrEnum):
    FULLY_CONSISTENT = "fully_consistent"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
