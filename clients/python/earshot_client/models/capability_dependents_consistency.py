from enum import StrEnum


class CapabilityDependentsConsistency(StrEnum):
    FULLY_CONSISTENT = "fully_consistent"
    LATEST = "latest"

    def __str__(self) -> str:
        return str(self.value)
