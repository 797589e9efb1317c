from enum import StrEnum


class ContainerResolutionReason(StrEnum):
    AMBIGUOUS_IDENTITY = "ambiguous_identity"
    EVIDENCE_QUALITY = "evidence_quality"
    UNKNOWN_IDENTITY = "unknown_identity"
    UNKNOWN_OWNER = "unknown_owner"
    UNKNOWN_PARTICIPANT = "unknown_participant"

    def __str__(self) -> str:
        return str(self.value)
