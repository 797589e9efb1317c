from enum import StrEnum


class Reason(StrEnum):
    ADMITTED_GRANT = "admitted_grant"
    ADMITTED_ORIGIN = "admitted_origin"
    ADMITTED_PUBLIC = "admitted_public"
    DENIED_CONSENT_PENDING = "denied_consent_pending"
    DENIED_HISTORICAL_REVISION = "denied_historical_revision"
    DENIED_NOT_CURRENT = "denied_not_current"
    DENIED_NOT_IN_AUDIENCE = "denied_not_in_audience"
    DENIED_UNKNOWN_ITEM = "denied_unknown_item"
    DENIED_UNRESOLVED_VIEWERS = "denied_unresolved_viewers"

    def __str__(self) -> str:
        return str(self.value)
