from enum import StrEnum


class ExportRecordKind(StrEnum):
    AUDIENCE = "audience"
    CAPABILITY = "capability"
    CONTENT = "content"
    DEVICE = "device"
    GRANT = "grant"
    IDEMPOTENCY_KEY = "idempotency_key"
    IDENTITY = "identity"
    ITEM = "item"
    ITEM_DIGEST = "item_digest"
    PARTICIPANT = "participant"
    RELATION = "relation"
    SCHEMA = "schema"

    def __str__(self) -> str:
        return str(self.value)
