from enum import StrEnum


class AudienceKind(StrEnum):
    OWNER_PRIVATE = "owner_private"
    PUBLIC = "public"
    SHARED = "shared"

    def __str__(self) -> str:
        return str(self.value)
