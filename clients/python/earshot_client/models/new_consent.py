from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NewConsent")


@_attrs_define
class NewConsent:
    """A subject's consent to a grant (SPEC §6.3).

    Attributes:
        subject (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant
            (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with
            400 `invalid_id`.
    """

    subject: str

    def to_dict(self) -> dict[str, Any]:
        subject = self.subject

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "subject": subject,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        subject = d.pop("subject")

        new_consent = cls(
            subject=subject,
        )

        return new_consent
