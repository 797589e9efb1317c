from enum import StrEnum


class ParticipantKind(StrEnum):
    AGENT = "agent"
    DEVICE = "device"
    PERSON = "person"

    def __str__(self) -> str:
        return str(self.value)
