from enum import StrEnum


class OriginKeyword(StrEnum):
    OWNER_PRIVATE = "owner_private"
    PUBLIC = "public"

    def __str__(self) -> str:
        return str(self.value)
