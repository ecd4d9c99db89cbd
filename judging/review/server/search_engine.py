"""An in-memory search engine for argilla-server, so the local server needs no Elasticsearch.

Registered with argilla-server's own registry as ``judging-memory`` (select it with
``ARGILLA_SEARCH_ENGINE=judging-memory``). It mirrors the semantics of argilla-server's
Elasticsearch engine (``argilla_server/search_engine/commons.py``) for what the SDK and the web UI
use: text queries (``simple_query_string``-like, AND of terms, over all text fields or one),
terms/range filters on record properties, metadata, suggestions and responses (per user or
overall, including the ``pending`` response status), multi-key sorting with missing values last,
offset/limit with total, the per-user random order of the annotation view, dataset and per-user
progress and metadata metrics. Vector similarity search is not supported.

The index is a process-global dict keyed by dataset id; it is lost when the process ends and
rebuilt from the database at start (see :func:`judging.review.server.serve`). Import this module
only after the ARGILLA_* environment variables are set: argilla-server reads its settings at import.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from argilla_server.enums import MetadataPropertyType, SortOrder
from argilla_server.errors.future import UnprocessableEntityError
from argilla_server.models import (
    Dataset,
    MetadataProperty,
    Record,
    Response,
    Suggestion,
    User,
    VectorSettings,
)
from argilla_server.search_engine.base import (
    AndFilter,
    Filter,
    FilterScope,
    FloatMetadataMetrics,
    IntegerMetadataMetrics,
    MetadataFilterScope,
    MetadataMetrics,
    Order,
    RangeFilter,
    RecordFilterScope,
    ResponseFilterScope,
    SearchEngine,
    SearchResponseItem,
    SearchResponses,
    SuggestionFilterScope,
    TermsFilter,
    TermsMetrics,
    TextQuery,
)
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import NoInspectionAvailable

ENGINE_NAME = "judging-memory"
log = logging.getLogger(__name__)

_MISSING = object()
_TOKEN = re.compile(r"\w+(?:[.'’]\w+)*", re.UNICODE)


class VectorSearchNotSupported(UnprocessableEntityError, NotImplementedError):
    """Similarity search needs vectors indexed in Elasticsearch/OpenSearch; this engine has none."""

    def __init__(self) -> None:
        super().__init__(f"Vector similarity search is not supported by the `{ENGINE_NAME}` search "
                         f"engine of the local review server; use Elasticsearch or OpenSearch for it.")


@dataclasses.dataclass
class _Index:
    fields: dict[str, str]  # name -> "text" | "chat" | "custom" | "image"
    questions: dict[str, str]  # question id -> name
    docs: dict[str, dict] = dataclasses.field(default_factory=dict)  # record id -> document


_INDICES: dict[str, _Index] = {}
_RECORD_DATASET: dict[str, str] = {}
_SEQUENCE = itertools.count()


def reset() -> None:
    """Forget every index (tests; the server rebuilds from the database at start)."""
    _INDICES.clear()
    _RECORD_DATASET.clear()


# --- helpers ---------------------------------------------------------------------------------


def _loaded(obj: Any, name: str, default: Any = None) -> Any:
    """`obj.name` if already loaded; never triggers a lazy load (which fails under asyncio)."""
    try:
        state = sa_inspect(obj)
    except NoInspectionAvailable:
        return getattr(obj, name, default)
    if name in state.unloaded:
        return default
    return getattr(obj, name, default)


def _str(value: Any) -> str:
    return str(getattr(value, "value", value))


def _field_kind(field: Any) -> str:
    for kind in ("text", "chat", "image", "custom"):
        if getattr(field, f"is_{kind}", False):
            return kind
    return "text"


def _tokens(text: str) -> list[str]:
    return [token.lower() for token in _TOKEN.findall(text)]


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _term(value: Any) -> str:
    """How a keyword field stores a value: booleans as true/false, the rest as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return _str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp.timestamp() * 1000.0  # epoch millis, as Elasticsearch compares dates
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            try:
                return _number(datetime.fromisoformat(value.replace("Z", "+00:00")))
            except ValueError:
                return None
    return None


def _terms_match(values: list, wanted: list[str]) -> bool:
    wanted_terms = {str(value) for value in wanted}
    wanted_numbers = {n for n in (_number(value) for value in wanted) if n is not None}
    for value in values:
        if _term(value) in wanted_terms:
            return True
        number = _number(value) if isinstance(value, (int, float)) else None
        if number is not None and number in wanted_numbers:
            return True
    return False


def _range_match(values: list, ge: Any, le: Any) -> bool:
    low, high = _number(ge), _number(le)
    for value in values:
        number = _number(value)
        if number is None:
            continue
        if (low is None or number >= low) and (high is None or number <= high):
            return True
    return False


def _sort_key(value: Any) -> tuple:
    number = _number(value) if not isinstance(value, str) else None
    return (0, number, "") if number is not None else (1, 0.0, _term(value))


# --- documents -------------------------------------------------------------------------------


def _text_of(kind: str, value: Any) -> list[str]:
    if value is None or kind == "image":
        return []
    if kind == "custom" and isinstance(value, dict):
        # A custom field's texts are searchable; images in it (data URIs) are not text.
        return [v for v in value.values() if isinstance(v, str) and not v.startswith("data:")]
    if kind == "chat":
        return [str(message.get("content", "")) for message in _as_list(value) if isinstance(message, dict)]
    return [value if isinstance(value, str) else str(value)]


def _response_doc(response: Response) -> dict:
    values = response.values or {}
    return {
        "id": str(response.id),
        "status": _str(response.status),
        "user_id": str(response.user_id),
        "values": {question: (value or {}).get("value") for question, value in values.items()},
    }


def _suggestion_doc(suggestion: Suggestion) -> dict:
    return {"type": None if suggestion.type is None else _str(suggestion.type), "agent": suggestion.agent,
            "score": suggestion.score, "value": suggestion.value}


def _question_name(index: _Index | None, suggestion: Suggestion) -> str | None:
    question = _loaded(suggestion, "question")
    if question is not None:
        return question.name
    return index.questions.get(str(suggestion.question_id)) if index else None


# --- the engine ------------------------------------------------------------------------------


@SearchEngine.register(engine_name=ENGINE_NAME)
class InMemorySearchEngine(SearchEngine):
    """argilla-server's SearchEngine over a process-global in-memory index."""

    @classmethod
    async def new_instance(cls) -> InMemorySearchEngine:
        return cls()

    async def close(self) -> None:
        pass

    async def ping(self) -> bool:
        return True

    async def info(self) -> dict:
        return {"engine": ENGINE_NAME, "datasets": len(_INDICES),
                "records": sum(len(index.docs) for index in _INDICES.values())}

    # --- index lifecycle ---

    @staticmethod
    def _index_for(dataset_id: Any, dataset: Dataset | None = None) -> _Index:
        key = str(dataset_id)
        index = _INDICES.get(key)
        if index is None:
            index = _INDICES[key] = _Index(fields={}, questions={})
        if dataset is not None:
            fields = _loaded(dataset, "fields")
            if fields is not None:
                index.fields = {field.name: _field_kind(field) for field in fields}
            questions = _loaded(dataset, "questions")
            if questions is not None:
                index.questions = {str(question.id): question.name for question in questions}
        return index

    async def create_index(self, dataset: Dataset) -> None:
        _INDICES.pop(str(dataset.id), None)
        self._index_for(dataset.id, dataset)

    async def delete_index(self, dataset: Dataset) -> None:
        index = _INDICES.pop(str(dataset.id), None)
        if index is not None:
            for record_id in index.docs:
                _RECORD_DATASET.pop(record_id, None)

    async def configure_metadata_property(self, dataset: Dataset, metadata_property: MetadataProperty) -> None:
        # Records keep all their metadata; filters are validated against the properties upstream.
        self._index_for(dataset.id)

    async def configure_index_vectors(self, vector_settings: VectorSettings) -> None:
        pass

    # --- documents ---

    async def index_records(self, dataset: Dataset, records: Iterable[Record]) -> None:
        index = self._index_for(dataset.id, dataset)
        for record in records:
            key = str(record.id)
            previous = index.docs.get(key, {})
            fields = record.fields or {}
            text = {name: _text_of(index.fields.get(name, "text"), value) for name, value in fields.items()}
            responses = _loaded(record, "responses", _MISSING)
            suggestions = _loaded(record, "suggestions", _MISSING)
            doc = {
                "id": key,
                "external_id": record.external_id,
                "status": _str(record.status) if record.status is not None else "pending",
                "inserted_at": record.inserted_at,
                "updated_at": record.updated_at,
                "text": {name: [_tokens(part) for part in parts] for name, parts in text.items() if parts},
                "metadata": dict(record.metadata_ or {}),
                "responses": (previous.get("responses", []) if responses is _MISSING
                              else [_response_doc(response) for response in responses or []]),
                "suggestions": (previous.get("suggestions", {}) if suggestions is _MISSING else {
                    name: _suggestion_doc(suggestion) for suggestion in suggestions or []
                    if (name := _question_name(index, suggestion)) is not None}),
                "seq": previous.get("seq", next(_SEQUENCE)),
            }
            index.docs[key] = doc
            _RECORD_DATASET[key] = str(dataset.id)

    def _doc(self, record_id: Any) -> dict | None:
        key = str(record_id)
        dataset_id = _RECORD_DATASET.get(key)
        index = _INDICES.get(dataset_id) if dataset_id else None
        doc = index.docs.get(key) if index else None
        if doc is None:
            log.debug("record %s is not in the in-memory index", key)
        return doc

    async def partial_record_update(self, record: Record, **update: Any) -> None:
        doc = self._doc(record.id)
        if doc is not None:
            doc.update({name: _str(value) if name == "status" else value for name, value in update.items()})

    async def delete_records(self, dataset: Dataset, records: Iterable[Record]) -> None:
        index = _INDICES.get(str(dataset.id))
        for record in records:
            key = str(record.id)
            _RECORD_DATASET.pop(key, None)
            if index is not None:
                index.docs.pop(key, None)

    async def update_record_response(self, response: Response) -> None:
        doc = self._doc(response.record_id)
        if doc is not None:
            doc["responses"] = [r for r in doc["responses"] if r["id"] != str(response.id)]
            doc["responses"].append(_response_doc(response))

    async def delete_record_response(self, response: Response) -> None:
        doc = self._doc(response.record_id)
        if doc is not None:
            doc["responses"] = [r for r in doc["responses"] if r["id"] != str(response.id)]

    async def update_record_suggestion(self, suggestion: Suggestion) -> None:
        doc = self._doc(suggestion.record_id)
        if doc is not None:
            name = _question_name(_INDICES.get(_RECORD_DATASET[str(suggestion.record_id)]), suggestion)
            if name is not None:
                doc["suggestions"][name] = _suggestion_doc(suggestion)

    async def delete_record_suggestion(self, suggestion: Suggestion) -> None:
        doc = self._doc(suggestion.record_id)
        if doc is not None:
            name = _question_name(_INDICES.get(_RECORD_DATASET[str(suggestion.record_id)]), suggestion)
            doc["suggestions"].pop(name, None)

    # --- progress and metrics ---

    async def get_dataset_progress(self, dataset: Dataset) -> dict:
        if dataset.is_draft:
            return {}
        counts: dict[str, int] = {}
        for doc in self._docs(dataset):
            counts[doc["status"]] = counts.get(doc["status"], 0) + 1
        return {"total": sum(counts.values()), **counts}

    async def get_dataset_user_progress(self, dataset: Dataset, user: User) -> dict:
        # The user's own responses by status (Elasticsearch, through include_in_root, also counts
        # the statuses of other users' responses on the same records; the UI means the user's own).
        if dataset.is_draft:
            return {}
        user_id = str(user.id)
        counts: dict[str, int] = {}
        for doc in self._docs(dataset):
            for response in doc["responses"]:
                if response["user_id"] == user_id:
                    counts[response["status"]] = counts.get(response["status"], 0) + 1
        return {"total": sum(counts.values()), **counts}

    async def compute_metrics_for(self, metadata_property: MetadataProperty) -> MetadataMetrics:
        name = metadata_property.name
        values = [value for doc in self._docs(metadata_property.dataset_id)
                  for value in _as_list(doc["metadata"].get(name))]
        kind = metadata_property.type
        if kind == MetadataPropertyType.terms:
            counts: dict[str, int] = {}
            for doc in self._docs(metadata_property.dataset_id):
                for term in {_term(value) for value in _as_list(doc["metadata"].get(name))}:
                    counts[term] = counts.get(term, 0) + 1
            buckets = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            return TermsMetrics(total=len(values),
                                values=[TermsMetrics.TermCount(term=term, count=count) for term, count in buckets])
        numbers = [n for n in (_number(value) for value in values) if n is not None]
        if kind == MetadataPropertyType.integer:
            return IntegerMetadataMetrics(min=int(min(numbers)) if numbers else None,
                                          max=int(max(numbers)) if numbers else None)
        return FloatMetadataMetrics(min=min(numbers) if numbers else None, max=max(numbers) if numbers else None)

    # --- search ---

    async def search(
        self,
        dataset: Dataset,
        query: TextQuery | str | None = None,
        filter: Filter | None = None,
        sort: list[Order] | None = None,
        offset: int = 0,
        limit: int = 100,
        user_id: str | None = None,
    ) -> SearchResponses:
        matcher = _TextMatcher.parse(query)
        hits: list[tuple[dict, float]] = []
        for doc in self._docs(dataset):
            score = matcher.score(doc) if matcher else 1.0
            if score is None or (filter is not None and not _matches(doc, filter)):
                continue
            if user_id is not None:  # Elasticsearch: function_score random_score seeded by the user
                digest = hashlib.sha256(f"{user_id}:{doc['id']}".encode()).digest()
                score *= int.from_bytes(digest[:8], "big") / 2**64
            hits.append((doc, score))
        if sort:
            docs = _sorted([doc for doc, _ in hits], sort)
            page = [SearchResponseItem(record_id=UUID(doc["id"]), score=None) for doc in docs]
        else:
            hits.sort(key=lambda hit: (-hit[1], hit[0]["seq"]))
            page = [SearchResponseItem(record_id=UUID(doc["id"]), score=score) for doc, score in hits]
        return SearchResponses(items=page[offset:offset + limit], total=len(page))

    async def similarity_search(self, dataset: Dataset, vector_settings: VectorSettings, *args: Any,
                                **kwargs: Any) -> SearchResponses:
        raise VectorSearchNotSupported()

    def _docs(self, dataset: Dataset | Any) -> list[dict]:
        key = str(getattr(dataset, "id", dataset))
        index = _INDICES.get(key)
        if index is None:
            return []
        return sorted(index.docs.values(), key=lambda doc: doc["seq"])


# --- text queries ----------------------------------------------------------------------------


@dataclasses.dataclass
class _Clause:
    tokens: list[str]
    prefix: bool = False  # the last token may be a prefix (`term*`)
    negated: bool = False

    def count(self, field_tokens: list[str]) -> int:
        n = len(self.tokens)
        hits = 0
        for start in range(len(field_tokens) - n + 1):
            window = field_tokens[start:start + n]
            if window[:-1] != self.tokens[:-1]:
                continue
            last, wanted = window[-1], self.tokens[-1]
            if last == wanted or (self.prefix and last.startswith(wanted)):
                hits += 1
        return hits


@dataclasses.dataclass
class _TextMatcher:
    """A subset of Elasticsearch's simple_query_string: terms ANDed, `"phrases"`, `-not`,
    `a | b`, `prefix*`; case-insensitive, on word tokens; over every text field or one."""

    groups: list[list[_Clause]]
    field: str | None

    @classmethod
    def parse(cls, query: TextQuery | str | None) -> _TextMatcher | None:
        if query is None:
            return None
        if isinstance(query, str):
            query = TextQuery(q=query)
        if not query.q.strip():
            return None
        groups = []
        for part in re.split(r"\s+\|\s+|\|", query.q):
            clauses = []
            for match in re.finditer(r'(?P<neg>[-+]?)(?:"(?P<phrase>[^"]*)"|(?P<word>[^\s"]+))', part):
                raw = match.group("phrase") if match.group("phrase") is not None else match.group("word")
                raw = raw.strip("()")
                tokens = _tokens(raw)
                if tokens:
                    clauses.append(_Clause(tokens=tokens, prefix=match.group("word") is not None
                                           and raw.endswith("*"), negated=match.group("neg") == "-"))
            if clauses:
                groups.append(clauses)
        return cls(groups=groups, field=query.field)

    def score(self, doc: dict) -> float | None:
        """A relevance-like score (matched occurrences), or None when the record does not match."""
        texts = [doc["text"].get(self.field, [])] if self.field else list(doc["text"].values())
        parts = [tokens for field in texts for tokens in field]
        best = None
        for clauses in self.groups:  # a query that analyses to no terms matches nothing
            total, matched = 0, True
            for clause in clauses:
                hits = sum(clause.count(tokens) for tokens in parts)
                if clause.negated == bool(hits):
                    matched = False
                    break
                total += hits
            if matched:
                best = max(best or 0.0, float(total or 1))
        return best


# --- filters and sort ------------------------------------------------------------------------


def _scope_values(doc: dict, scope: FilterScope) -> list:
    if isinstance(scope, MetadataFilterScope):
        return _as_list(doc["metadata"].get(scope.metadata_property))
    if isinstance(scope, SuggestionFilterScope):
        suggestion = doc["suggestions"].get(scope.question) or {}
        return _as_list(suggestion.get(scope.property or "value"))
    if isinstance(scope, RecordFilterScope):
        return _as_list(doc.get(_str(scope.property)))
    raise ValueError(f"Cannot process request for search scope {scope}")


def _user_responses(doc: dict, scope: ResponseFilterScope) -> list[dict]:
    if scope.user is None:
        return doc["responses"]
    user_id = str(scope.user.id)
    return [response for response in doc["responses"] if response["user_id"] == user_id]


def _response_matches(doc: dict, filter: TermsFilter | RangeFilter) -> bool:
    scope: ResponseFilterScope = filter.scope
    responses = _user_responses(doc, scope)
    if scope.question:
        for response in responses:
            values = _as_list(response["values"].get(scope.question))
            if isinstance(filter, TermsFilter) and _terms_match(values, filter.values):
                return True
            if isinstance(filter, RangeFilter) and _range_match(values, filter.ge, filter.le):
                return True
        return False
    if scope.property == "status" and isinstance(filter, TermsFilter):
        wanted = {str(value) for value in filter.values}
        if "pending" in wanted and not responses:  # no response (by this user, or by anyone)
            return True
        return any(response["status"] in wanted for response in responses)
    raise ValueError(f"Cannot process filter scope {scope}")


def _matches(doc: dict, filter: Filter) -> bool:
    if isinstance(filter, AndFilter):
        return all(_matches(doc, inner) for inner in filter.filters)
    if isinstance(filter.scope, ResponseFilterScope):
        return _response_matches(doc, filter)
    values = _scope_values(doc, filter.scope)
    if isinstance(filter, TermsFilter):
        return _terms_match(values, filter.values)
    if isinstance(filter, RangeFilter):
        return _range_match(values, filter.ge, filter.le)
    raise ValueError(f"Cannot process request for filter {filter}")


def _order_value(doc: dict, order: Order) -> Any:
    scope = order.scope
    descending = _str(order.order) == SortOrder.desc.value
    if isinstance(scope, ResponseFilterScope):
        name = scope.question
        values = [value for response in _user_responses(doc, scope)
                  for value in _as_list(response["values"].get(name) if name else response.get(scope.property))]
        numbers = [n for n in (_number(value) for value in values if not isinstance(value, str)) if n is not None]
        if numbers:  # Elasticsearch: mode "avg" over the (user's) responses
            return (0, sum(numbers) / len(numbers), "")
    else:
        values = _scope_values(doc, scope)
    if not values:
        return _MISSING
    keys = [_sort_key(value) for value in values]  # multi-valued: min ascending, max descending
    return max(keys) if descending else min(keys)


def _sorted(docs: list[dict], sort: list[Order]) -> list[dict]:
    for order in reversed(sort):  # stable sorts, least significant key first
        keyed = [(doc, _order_value(doc, order)) for doc in docs]
        present = [item for item in keyed if item[1] is not _MISSING]
        missing = [item for item in keyed if item[1] is _MISSING]
        present.sort(key=lambda item: item[1], reverse=_str(order.order) == SortOrder.desc.value)
        docs = [doc for doc, _ in present + missing]  # missing values last, both ways
    return docs
