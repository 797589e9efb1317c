from enum import StrEnum


class ViewerSubsetsSource(StrEnum):
    GRANT = "grant"
    ORIGIN = "origin"

    def __str__(self) -> str:
        return str(self.value)
