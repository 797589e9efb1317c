from enum import StrEnum


class WriteOutcomeReason(StrEnum):
    CONSENT_PENDING = "consent_pending"
    REQUESTED = "requested"
    SOURCE_NOT_ADMISSIBLE = "source_not_admissible"
    SOURCE_NOT_CURRENT = "source_not_current"
    SOURCE_REACHABLE_ONLY_THROUGH_GRANT = "source_reachable_only_through_grant"

    def __str__(self) -> str:
        return str(self.value)
