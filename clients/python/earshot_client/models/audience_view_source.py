from enum import StrEnum


class AudienceViewSource(StrEnum):
    GRANT = "grant"
    ORIGIN = "origin"

    def __str__(self) -> str:
        return str(self.value)
