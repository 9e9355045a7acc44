"""A BM25 index over tool text, persistent like the snapshot it belongs to.

Each ``RegistrySnapshot`` carries one ``SearchIndex``; a commit derives the
next one from the changed tools only (``with_changes``), sharing every other
posting with its predecessor, so a tool is findable in exactly the snapshots
where it is callable and a save re-indexes one tool, not the folder.

Ranking is BM25 over weighted fields: the name's parts (``snake_case`` and
``camelCase`` split) weigh most, then ``search_hint``, parameter names, the
description and parameter descriptions. Words are stemmed (PyStemmer's
English Snowball stemmer) and a query word also matches, at a lower weight,
the verbs tool names use for the same action (``fetch`` for ``get``).
"""

from __future__ import annotations

import heapq
import logging
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import Stemmer  # type: ignore[import-not-found]  # PyStemmer ships no type hints
from immutables import Map

from ..types import AgentTool
from .lifecycle import safe_name

__all__ = ["SearchIndex", "query_terms", "tool_terms"]

logger = logging.getLogger(__name__)

K1: Final = 1.2
B: Final = 0.75

NAME_WEIGHT: Final = 3.0
HINT_WEIGHT: Final = 2.0
PARAMETER_NAME_WEIGHT: Final = 1.0
DESCRIPTION_WEIGHT: Final = 1.0
PARAMETER_TEXT_WEIGHT: Final = 0.5
SYNONYM_WEIGHT: Final = 0.4
"""How much a query word's action synonym counts against the word itself."""

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOPWORDS: Final = frozenset(
    "a an and are as at be by can for from how i in into is it its me my of on or please some that the "
    "this to up use using want what when which with would you your".split()
)
_SYNONYMS: Final[tuple[frozenset[str], ...]] = tuple(
    frozenset(group.split())
    for group in (
        "get fetch retrieve read show obtain look lookup load view see",
        "list enumerate browse all",
        "create add new make insert register open",
        "delete remove drop erase destroy purge",
        "update edit modify change set patch rename",
        "search find query lookup locate",
        "send post publish notify message email",
        "run execute start launch trigger invoke",
        "stop cancel halt kill abort terminate",
        "convert translate transform",
        "check verify validate test",
        "count tally number",
        "download export save",
        "upload import",
        "summarize summarise summary",
    )
)
_stemmer: Any = Stemmer.Stemmer("english")


def _words(text: str) -> list[str]:
    """Lower-cased words of ``text``, with ``snake_case`` and ``camelCase`` split."""
    return [word.lower() for word in _WORD.findall(text)]


_STEM_CACHE_SIZE: Final = 50_000
_stem_cache: dict[str, str] = {}


def _stems(text: str) -> list[str]:
    """The stems of ``text``'s words, stop words left out; tool text repeats words, so stems are cached."""
    stems: list[str] = []
    cache = _stem_cache
    for word in _words(text):
        if word in _STOPWORDS:
            continue
        stem = cache.get(word)
        if stem is None:
            stem = _stemmer.stemWord(word)
            if len(cache) < _STEM_CACHE_SIZE:
                cache[word] = stem
        stems.append(stem)
    return stems


_SYNONYM_STEMS: Final[dict[str, frozenset[str]]] = {}
for _group in _SYNONYMS:
    _stemmed = frozenset(_stemmer.stemWords(list(_group)))
    for _stem in _stemmed:
        _SYNONYM_STEMS[_stem] = _SYNONYM_STEMS.get(_stem, frozenset()) | _stemmed


def _parameters(schema: Any) -> Iterator[tuple[str, str]]:
    """Each top-level parameter's name and description from an input schema."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return
    for name, spec in properties.items():
        text = spec.get("description") if isinstance(spec, Mapping) else None
        yield str(name), text if isinstance(text, str) else ""


def tool_terms(tool: AgentTool) -> dict[str, float]:
    """The weighted term frequencies a tool is found by."""
    spec = tool.tool_spec
    fields: list[tuple[str, float]] = [
        (tool.tool_name, NAME_WEIGHT),
        (tool.search_hint or "", HINT_WEIGHT),
        (spec.get("description", ""), DESCRIPTION_WEIGHT),
        (" ".join((tool.category or "", *tool.tags)), PARAMETER_NAME_WEIGHT),
    ]
    for name, text in _parameters(spec.get("inputSchema", {}).get("json")):
        fields.append((name, PARAMETER_NAME_WEIGHT))
        fields.append((text, PARAMETER_TEXT_WEIGHT))
    terms: dict[str, float] = {}
    for text, weight in fields:
        for stem in _stems(text):
            terms[stem] = terms.get(stem, 0.0) + weight
    return terms


def query_terms(query: str) -> dict[str, float]:
    """A query's stems with their weights: 1 for a word the user wrote, less for its synonyms."""
    weights: dict[str, float] = {}
    for stem in _stems(query):
        weights[stem] = 1.0
    for stem in list(weights):
        for synonym in _SYNONYM_STEMS.get(stem, ()):
            weights.setdefault(synonym, SYNONYM_WEIGHT)
    return weights


def _terms_or_name(name: str, tool: AgentTool) -> dict[str, float]:
    """``tool_terms``, or the name's alone if the tool's metadata raises (a tool's fault stays its own)."""
    try:
        return tool_terms(tool)
    except Exception:
        logger.exception("tool_name=<%s> | indexed by name only: its metadata raised", safe_name(tool))
        return {stem: NAME_WEIGHT for stem in _stems(name)}


@dataclass(frozen=True, slots=True)
class _Document:
    terms: Mapping[str, float]
    length: float


class SearchIndex:
    """An immutable BM25 index of named tools; ``with_changes`` derives the next one."""

    __slots__ = ("_documents", "_postings", "_total_length")

    def __init__(self) -> None:
        self._documents: Map[str, _Document] = Map()
        self._postings: Map[str, Map[str, tuple[float, float]]] = Map()
        """Per term: each document's weighted term frequency and length."""
        self._total_length = 0.0

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, name: object) -> bool:
        return name in self._documents

    def with_changes(self, removed: Iterable[str], added: Iterable[tuple[str, AgentTool]]) -> SearchIndex:
        """The index without ``removed`` names and with ``added`` tools (a replaced name is in both)."""
        documents = self._documents.mutate()
        postings = self._postings.mutate()
        total = self._total_length
        for name in removed:
            old = documents.get(name)
            if old is None:
                continue
            del documents[name]
            total -= old.length
            for term in old.terms:
                left = postings[term].delete(name)
                if left:
                    postings[term] = left
                else:
                    del postings[term]
        grown: dict[str, dict[str, tuple[float, float]]] = {}
        for name, tool in added:
            terms = _terms_or_name(name, tool)
            document = _Document(terms, sum(terms.values()))
            documents[name] = document
            total += document.length
            for term, weight in terms.items():
                grown.setdefault(term, {})[name] = (weight, document.length)
        for term, entries in grown.items():
            posting = postings.get(term)
            postings[term] = Map(entries) if posting is None else posting.update(entries)
        index = SearchIndex.__new__(SearchIndex)
        index._documents = documents.finish()
        index._postings = postings.finish()
        index._total_length = total
        return index

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The best ``limit`` names for ``query`` with their scores, best first (ties by name)."""
        count = len(self._documents)
        if count == 0 or limit <= 0:
            return []
        average = self._total_length / count or 1.0
        scores: dict[str, float] = {}
        for term, weight in query_terms(query).items():
            posting = self._postings.get(term)
            if posting is None:
                continue
            df = len(posting)
            idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * weight * (K1 + 1.0)
            fixed, per_length = K1 * (1.0 - B), K1 * B / average
            for name, (tf, length) in posting.items():
                scores[name] = scores.get(name, 0.0) + idf * tf / (tf + fixed + per_length * length)
        return heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
