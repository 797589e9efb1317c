from enum import StrEnum


class HistoricalReason(StrEnum):
    DENIED_HISTORICAL_REVISION = "denied_historical_revision"

    def __str__(self) -> str:
        return str(self.value)
