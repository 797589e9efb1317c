from enum import StrEnum


class ImportOutcomeOutcome(StrEnum):
    CREATED = "created"

    def __str__(self) -> str:
        return str(self.value)
