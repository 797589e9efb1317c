from enum import StrEnum


class ViewerAudienceSource(StrEnum):
    GRANT = "grant"
    ORIGIN = "origin"

    def __str__(self) -> str:
        return str(self.value)
