from enum import StrEnum


class WriteOutcomeOutcome(StrEnum):
    ALLOWED = "allowed"
    CONSENTED = "consented"
    CONSUMED = "consumed"
    CREATED = "created"
    DENIED = "denied"
    EXISTS = "exists"
    GRANTED = "granted"
    QUARANTINED = "quarantined"
    RECORDED = "recorded"
    REMOVED = "removed"
    REVOKED = "revoked"
    SUPPRESSED = "suppressed"
    UPDATED = "updated"
    WITHDRAWN = "withdrawn"

    def __str__(self) -> str:
        return str(self.value)
