from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.embedding_metric import EmbeddingMetric
from ..models.origin_keyword import OriginKeyword
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attributes import Attributes
    from ..models.viewers import Viewers


T = TypeVar("T", bound="NewItem")


@_attrs_define
class NewItem:
    """
    Attributes:
        owner (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous participant (`anonymous`,
            `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any other malformed identifier with 400
            `invalid_id`.
        origin (OriginKeyword | Viewers): Where an item was recorded: `public`, `owner_private`, or the viewers present
            (bound at write time; unresolved viewers are refused with `origin_unresolved`).
        id (None | str | Unset): Item id; a random one is generated when absent.
        content (None | str | Unset): Text, at most 65536 bytes. Never influences the audience.
        attributes (Attributes | None | Unset):
        subjects (list[str] | Unset): The participants the item is about (SPEC §6.3), each a participant of the store
            (else `subject_not_found`). A grant on an item with subjects other than its owner admits nothing until each of
            them consents.
        author (None | str | Unset): SPEC §6.2: the participant whose words the item carries (e.g. the sender of an
            email); a known participant, else 404 `author_not_found`. Without it the author is the owner only when the
            origin is `owner_private`, public, or viewers resolving to the owner alone (the owner's own note); an origin
            audience holding anyone else makes the author unknown, judged once at write time: the item is then data
            (`data_reason: author_unknown`) whatever trust the owner gives later.
        embedding (list[float] | None | Unset): The item's embedding (dense recall). Stored with the item's content:
            exported, imported, replicated and removed with it; never returned by a read.
        embedding_metric (EmbeddingMetric | None | Unset): The metric the embedding is meant for. The first embedding of
            a store fixes it (`cosine` when absent); later, one that differs is 422 `invalid_embedding`. Only with
            `embedding`.
    """

    owner: str
    origin: OriginKeyword | Viewers
    id: None | str | Unset = UNSET
    content: None | str | Unset = UNSET
    attributes: Attributes | None | Unset = UNSET
    subjects: list[str] | Unset = UNSET
    author: None | str | Unset = UNSET
    embedding: list[float] | None | Unset = UNSET
    embedding_metric: EmbeddingMetric | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.attributes import Attributes  # noqa: PLC0415

        owner = self.owner

        origin: dict[str, Any] | str
        if isinstance(self.origin, OriginKeyword):
            origin = self.origin.value
        else:
            origin = self.origin.to_dict()

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content

        attributes: dict[str, Any] | None | Unset
        if isinstance(self.attributes, Unset):
            attributes = UNSET
        elif isinstance(self.attributes, Attributes):
            attributes = self.attributes.to_dict()
        else:
            attributes = self.attributes

        subjects: list[str] | Unset = UNSET
        if not isinstance(self.subjects, Unset):
            subjects = self.subjects

        author: None | str | Unset
        if isinstance(self.author, Unset):
            author = UNSET
        else:
            author = self.author

        embedding: list[float] | None | Unset
        if isinstance(self.embedding, Unset):
            embedding = UNSET
        elif isinstance(self.embedding, list):
            embedding = self.embedding

        else:
            embedding = self.embedding

        embedding_metric: None | str | Unset
        if isinstance(self.embedding_metric, Unset):
            embedding_metric = UNSET
        elif isinstance(self.embedding_metric, EmbeddingMetric):
            embedding_metric = self.embedding_metric.value
        else:
            embedding_metric = self.embedding_metric

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "owner": owner,
                "origin": origin,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if content is not UNSET:
            field_dict["content"] = content
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if subjects is not UNSET:
            field_dict["subjects"] = subjects
        if author is not UNSET:
            field_dict["author"] = author
        if embedding is not UNSET:
            field_dict["embedding"] = embedding
        if embedding_metric is not UNSET:
            field_dict["embedding_metric"] = embedding_metric

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attributes import Attributes  # noqa: PLC0415
        from ..models.viewers import Viewers  # noqa: PLC0415

        d = dict(src_dict)
        owner = d.pop("owner")

        def _parse_origin(data: object) -> OriginKeyword | Viewers:
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_origin_origin_keyword = OriginKeyword(data)

                return componentsschemas_origin_origin_keyword
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_origin_type_1 = Viewers.from_dict(data)

            return componentsschemas_origin_type_1

        origin = _parse_origin(d.pop("origin"))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))

        def _parse_attributes(data: object) -> Attributes | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                attributes_type_0 = Attributes.from_dict(data)

                return attributes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Attributes | None | Unset, data)

        attributes = _parse_attributes(d.pop("attributes", UNSET))

        subjects = cast(list[str], d.pop("subjects", UNSET))

        def _parse_author(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        author = _parse_author(d.pop("author", UNSET))

        def _parse_embedding(data: object) -> list[float] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                embedding_type_0 = cast(list[float], data)

                return embedding_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[float] | None | Unset, data)

        embedding = _parse_embedding(d.pop("embedding", UNSET))

        def _parse_embedding_metric(data: object) -> EmbeddingMetric | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                embedding_metric_type_0 = EmbeddingMetric(data)

                return embedding_metric_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EmbeddingMetric | None | Unset, data)

        embedding_metric = _parse_embedding_metric(d.pop("embedding_metric", UNSET))

        new_item = cls(
            owner=owner,
            origin=origin,
            id=id,
            content=content,
            attributes=attributes,
            subjects=subjects,
            author=author,
            embedding=embedding,
            embedding_metric=embedding_metric,
        )

        return new_item
