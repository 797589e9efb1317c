from enum import StrEnum


class EmbeddingMetric(StrEnum):
    COSINE = "cosine"
    DOT = "dot"

    def __str__(self) -> str:
        return str(self.value)
