from enum import StrEnum


class ObjectRefType(StrEnum):
    AUDIENCE = "audience"
    CAPABILITY = "capability"
    DEVICE = "device"
    ITEM = "item"
    PARTICIPANT = "participant"

    def __str__(self) -> str:
        return str(self.value)
