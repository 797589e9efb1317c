from enum import StrEnum


class DataReason(StrEnum):
    AUTHOR_REMOVED = "author_removed"
    AUTHOR_UNKNOWN = "author_unknown"
    PROVENANCE_INCOMPLETE = "provenance_incomplete"
    UNTRUSTED_AUTHOR = "untrusted_author"
    UNTRUSTED_SOURCE = "untrusted_source"

    def __str__(self) -> str:
        return str(self.value)
