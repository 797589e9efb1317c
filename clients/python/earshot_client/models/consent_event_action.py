from enum import StrEnum


class ConsentEventAction(StrEnum):
    CONSENTED = "consented"
    WITHDRAWN = "withdrawn"

    def __str__(self) -> str:
        return str(self.value)
