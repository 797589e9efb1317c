from enum import StrEnum


class Role(StrEnum):
    DATA = "data"
    INSTRUCTION = "instruction"

    def __str__(self) -> str:
        return str(self.value)
