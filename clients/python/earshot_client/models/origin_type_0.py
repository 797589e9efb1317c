from enum import StrEnum


class OriginType0(StrEnum):
    OWNER_PRIVATE = "owner_private"
    PUBLIC = "public"

    def __str__(self) -> str:
        return str(self.value)
