from enum import StrEnum


class AuthReason(StrEnum):
    ALLOWED_CAPABILITY = "allowed_capability"
    ALLOWED_OWNER = "allowed_owner"
    ALLOWED_RELATION = "allowed_relation"
    DENIED_AGGREGATION = "denied_aggregation"
    DENIED_CONDITION_ERROR = "denied_condition_error"
    DENIED_CONDITION_FALSE = "denied_condition_false"
    DENIED_EXPIRED = "denied_expired"
    DENIED_HISTORICAL_REVISION = "denied_historical_revision"
    DENIED_NOT_YET_VALID = "denied_not_yet_valid"
    DENIED_NO_AUTHORITY = "denied_no_authority"
    DENIED_REVOKED = "denied_revoked"
    DENIED_UNKNOWN_DEVICE = "denied_unknown_device"
    DENIED_UNKNOWN_PRINCIPAL = "denied_unknown_principal"
    DENIED_USES_EXHAUSTED = "denied_uses_exhausted"

    def __str__(self) -> str:
        return str(self.value)
