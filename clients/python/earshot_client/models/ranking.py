from enum import StrEnum


class Ranking(StrEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"

    def __str__(self) -> str:
        return str(self.value)
