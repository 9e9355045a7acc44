"""A BM25 index over tool text, persistent like the snapshot it belongs to.

Each ``RegistrySnapshot`` carries one ``SearchIndex``; a commit derives the
next one from the changed tools only (``with_changes``), sharing every other
posting with its predecessor, so a tool is findable in exactly the snapshots
where it is callable and a save re-indexes one tool, not the folder.

Ranking is BM25F over two fields: the name's parts (``snake_case`` and
``camelCase`` split), and the rest of the text, in which ``search_hint`` weighs
most, then parameter names, the description and parameter descriptions; each
field's term frequency is normalised by that field's length. Words are stemmed (PyStemmer's
English Snowball stemmer, after a few irregular plurals and verb forms). A
query word also matches, at a lower weight, a small lexicon of tool
vocabulary: the verbs tool names use for the same action (``fetch`` for
``get``) and the things tools act on, with their usual abbreviations
(``repo``, ``pr``, ``vm``); a document takes the best of a word's matches, not
their sum. Phrasal verbs count as the verb they stand for ("pull up" as
``get``, "get rid of" as ``delete``). A query word no tool uses matches, at a
lower weight, the indexed words it begins or that begin it (``auth`` finds
``authenticate``), from a map of four-letter prefixes kept with the postings.
"""

from __future__ import annotations

import heapq
import logging
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

import Stemmer  # type: ignore[import-not-found]  # PyStemmer ships no type hints
from immutables import Map

from ..types import AgentTool
from .lifecycle import safe_name

__all__ = ["SearchIndex", "query_terms", "tool_terms"]

logger = logging.getLogger(__name__)

K1: Final = 1.2
B: Final = 0.75
"""Length normalisation of the text other than the name."""
NAME_B: Final = 0.5
"""Length normalisation of the name: names are short and vary less."""

NAME_WEIGHT: Final = 3.0
HINT_WEIGHT: Final = 2.0
PARAMETER_NAME_WEIGHT: Final = 1.0
DESCRIPTION_WEIGHT: Final = 1.0
PARAMETER_TEXT_WEIGHT: Final = 0.5
SYNONYM_WEIGHT: Final = 0.5
"""How much a query word's synonym counts against the word itself."""
PREFIX: Final = 4
"""How many letters a word shares with an indexed word, at least, to match it by prefix."""
PREFIX_WEIGHT: Final = 0.5
"""How much a prefix match counts against the word itself."""

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOPWORDS: Final = frozenset(
    "a an and are as at be by can for from how i in into is it its me my of on or please some that the "
    "this to up use using want what when which with would you your".split()
)
_SYNONYMS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(group.split(","))
    for group in (
        # actions: the verbs tool names use, and the words people use for them
        "get,fetch,retrieve,read,show,obtain,look,lookup,load,view,see,open,detail,describe,inspect,info",
        "list,enumerate,browse,all,every,overview",
        "create,add,new,make,insert,register,open,compose,write",
        "delete,remove,drop,erase,destroy,purge,discard,trash",
        "update,edit,modify,change,set,patch,rename,alter,fix",
        "search,find,query,lookup,locate,filter,match",
        "send,post,publish,notify,message,email,dispatch",
        "run,execute,start,launch,trigger,invoke,kick",
        "stop,cancel,halt,kill,abort,terminate,shutdown",
        "convert,translate,transform",
        "check,verify,validate,test",
        "count,tally,number,total,how many",
        "download,export,save,dump,backup",
        "upload,import",
        "summarize,summarise,summary",
        "copy,duplicate,clone,replicate",
        "archive,hide,deactivate",
        "restore,recover,undelete,undo,unarchive,revert,rollback",
        "share,grant,invite,permission,access",
        "move,transfer,relocate",
        "assign,reassign,delegate",
        "enable,activate,turn on",
        "disable,turn off",
        "approve,accept,confirm",
        "reject,decline,deny",
        "schedule,book,plan",
        "reply,respond,answer,comment",
        # things: what tools act on, as people call them
        "ticket,issue,case,bug",
        "message,msg,post,note,chat",
        "email,mail,e-mail,inbox",
        "repository,repo,codebase",
        "pull request,pr,merge request,mr,code review",
        "virtual machine,vm,instance,server",
        "database,db",
        "document,doc,file",
        "directory,dir,folder",
        "user,member,person,people,account,employee",
        "customer,client,buyer",
        "invoice,bill,statement",
        "payment,charge,transaction",
        "event,appointment,meeting",
        "task,todo,to-do,chore",
        "label,tag,category",
        "organization,organisation,org,company,business",
        "track,song,tune",
        "image,picture,photo",
        "configuration,config,setting,settings",
        "environment,env",
        "row,record,entry",
        "column,field",
        "channel,room",
        "direct message,dm,private message",
        "kubernetes,k8s",
        "deployment,deploy,rollout",
        "incident,outage",
        "spreadsheet,sheet,workbook,csv",
        "calendar,schedule,agenda",
    )
)
"""Groups of words (a member may be two words) that a query word also matches, at ``SYNONYM_WEIGHT``."""
_PHRASES: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(rf"\b{pattern}\b", re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"pull(?:s|ed|ing)? up", "get"),
        (r"look(?:s|ed|ing)? up", "get"),
        (r"look(?:s|ed|ing)? (?:for|through)", "search"),
        (r"look(?:s|ed|ing)? at", "view"),
        (r"find(?:s|ing)? out", "get"),
        (r"get(?:s|ting)? rid of", "delete"),
        (r"(?:throw|throws|threw|thrown) (?:away|out)", "delete"),
        (r"(?:clean|clear|tear)(?:s|ed|ing)? (?:up|out|down)", "delete"),
        (r"set(?:s|ting)? up", "create"),
        (r"spin(?:s|ning)? up", "create"),
        (r"sign(?:s|ed|ing)? up", "register"),
        (r"how many", "count"),
        (r"make(?:s)? (?:a )?cop(?:y|ies) of", "copy"),
        (r"bring(?:s|ing)? back", "restore"),
        (r"brought back", "restore"),
        (r"(?:turn|switch)(?:s|ed|ing)? on", "enable"),
        (r"(?:turn|switch)(?:s|ed|ing)? off", "disable"),
        (r"shut(?:s|ting)? down", "stop"),
        (r"kick(?:s|ed|ing)? off", "start"),
        (r"back(?:s|ed|ing)? up", "backup"),
        (r"roll(?:s|ed|ing)? back", "rollback"),
        (r"fill(?:s|ed|ing)? in", "update"),
        (r"send(?:s|ing)? out", "send"),
        (r"hand(?:s|ed|ing)? over", "transfer"),
    )
)
"""Phrasal verbs read as the one verb tool names use: "pull up the invoice" asks for ``get``, not ``pull``."""
_IRREGULAR: Final = {
    "indices": "index",
    "people": "person",
    "children": "child",
    "analyses": "analysis",
    "criteria": "criterion",
    "mice": "mouse",
    "data": "data",
    "wrote": "write",
    "written": "write",
    "sent": "send",
    "made": "make",
    "ran": "run",
    "got": "get",
    "found": "find",
    "built": "build",
    "shown": "show",
    "chose": "choose",
    "chosen": "choose",
    "froze": "freeze",
    "frozen": "freeze",
}
"""Plurals and verb forms the stemmer does not bring to the word a tool uses."""
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
            stem = _stemmer.stemWord(_IRREGULAR.get(word, word))
            if len(cache) < _STEM_CACHE_SIZE:
                cache[word] = stem
        stems.append(stem)
    return stems


_SYNONYM_STEMS: Final[dict[str, frozenset[str]]] = {}
"""Per one-word member's stem (or two-word member's stems, space-joined): the stems of its groups."""
for _group in _SYNONYMS:
    _members = [tuple(_stems(member)) for member in _group]
    _stemmed = frozenset(stem for member in _members for stem in member)
    for _member in _members:
        if _member:
            _key = " ".join(_member)
            _SYNONYM_STEMS[_key] = _SYNONYM_STEMS.get(_key, frozenset()) | _stemmed


def _parameters(schema: Any) -> Iterator[tuple[str, str]]:
    """Each top-level parameter's name and description from an input schema."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return
    for name, spec in properties.items():
        text = spec.get("description") if isinstance(spec, Mapping) else None
        yield str(name), text if isinstance(text, str) else ""


def _fields(tool: AgentTool) -> tuple[dict[str, float], dict[str, float]]:
    """A tool's name stems with their counts, and the weighted stems of the rest of its text."""
    spec = tool.tool_spec
    fields: list[tuple[str, float]] = [
        (tool.search_hint or "", HINT_WEIGHT),
        (spec.get("description", ""), DESCRIPTION_WEIGHT),
        (" ".join((tool.category or "", *tool.tags)), PARAMETER_NAME_WEIGHT),
    ]
    for name, text in _parameters(spec.get("inputSchema", {}).get("json")):
        fields.append((name, PARAMETER_NAME_WEIGHT))
        fields.append((text, PARAMETER_TEXT_WEIGHT))
    body: dict[str, float] = {}
    for text, weight in fields:
        for stem in _stems(text):
            body[stem] = body.get(stem, 0.0) + weight
    return _counts(tool.tool_name), body


def _counts(text: str) -> dict[str, float]:
    counts: dict[str, float] = {}
    for stem in _stems(text):
        counts[stem] = counts.get(stem, 0.0) + 1.0
    return counts


def tool_terms(tool: AgentTool) -> dict[str, float]:
    """The weighted term frequencies a tool is found by (its name's parts at ``NAME_WEIGHT``)."""
    name, body = _fields(tool)
    terms = dict(body)
    for stem, count in name.items():
        terms[stem] = terms.get(stem, 0.0) + NAME_WEIGHT * count
    return terms


def _concepts(query: str) -> list[dict[str, float]]:
    """Per word of the query (and per two-word synonym in it): the stems it matches, with their weights.

    A phrasal verb counts as the verb tool names use ("get rid of" as ``delete``); a word
    matches itself at 1 and its synonyms at ``SYNONYM_WEIGHT``; a two-word member of a synonym
    group ("pull request") is matched on two adjacent words.
    """
    for pattern, replacement in _PHRASES:
        query = pattern.sub(replacement, query)
    stems = _stems(query)
    keys = dict.fromkeys([*stems, *(f"{first} {second}" for first, second in pairwise(stems))])
    concepts: list[dict[str, float]] = []
    for key in keys:
        concept = {key: 1.0} if " " not in key else {}
        for synonym in _SYNONYM_STEMS.get(key, ()):
            concept.setdefault(synonym, SYNONYM_WEIGHT)
        if concept:
            concepts.append(concept)
    return concepts


def query_terms(query: str) -> dict[str, float]:
    """A query's stems with their weights: 1 for a word the user wrote, less for its synonyms."""
    weights: dict[str, float] = {}
    for concept in _concepts(query):
        for stem, weight in concept.items():
            weights[stem] = max(weight, weights.get(stem, 0.0))
    return weights


def _fields_or_name(name: str, tool: AgentTool) -> tuple[dict[str, float], dict[str, float]]:
    """``_fields``, or the name's alone if the tool's metadata raises (a tool's fault stays its own)."""
    try:
        return _fields(tool)
    except Exception:
        logger.exception("tool_name=<%s> | indexed by name only: its metadata raised", safe_name(tool))
        return _counts(name), {}


@dataclass(frozen=True, slots=True)
class _Document:
    terms: frozenset[str]
    name_length: float
    body_length: float


class SearchIndex:
    """An immutable BM25F index of named tools; ``with_changes`` derives the next one.

    BM25F: a term's frequency in the name and in the rest of the text are each
    normalised by that field's length against its average over the index, then
    weighted and added, then saturated once; so a long description no longer
    dilutes a match in the name, and a name match is not counted as if the name
    were as long as the description.
    """

    __slots__ = ("_body_total", "_cache", "_documents", "_name_total", "_postings", "_prefixes")

    def __init__(self) -> None:
        self._documents: Map[str, _Document] = Map()
        self._postings: Map[str, Map[str, tuple[float, float, float, float]]] = Map()
        """Per term: each document's frequency in the name and the (weighted) body, and their lengths."""
        self._prefixes: Map[str, frozenset[str]] = Map()
        """Per first ``PREFIX`` letters: the indexed terms that start with them."""
        self._name_total = 0.0
        self._body_total = 0.0
        self._cache: dict[str, tuple[float, dict[str, float]]] = {}
        """Per term searched for: ``_scored``'s answer (this index never changes, so neither does it)."""

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, name: object) -> bool:
        return name in self._documents

    def with_changes(self, removed: Iterable[str], added: Iterable[tuple[str, AgentTool]]) -> SearchIndex:
        """The index without ``removed`` names and with ``added`` tools (a replaced name is in both)."""
        documents = self._documents.mutate()
        postings = self._postings.mutate()
        prefixes = self._prefixes.mutate()
        name_total, body_total = self._name_total, self._body_total
        for name in removed:
            old = documents.get(name)
            if old is None:
                continue
            del documents[name]
            name_total -= old.name_length
            body_total -= old.body_length
            for term in old.terms:
                left = postings[term].delete(name)
                if left:
                    postings[term] = left
                else:
                    del postings[term]
                    if len(term) >= PREFIX:
                        kept = prefixes[term[:PREFIX]] - {term}
                        if kept:
                            prefixes[term[:PREFIX]] = kept
                        else:
                            del prefixes[term[:PREFIX]]
        grown: dict[str, dict[str, tuple[float, float, float, float]]] = {}
        for name, tool in added:
            in_name, in_body = _fields_or_name(name, tool)
            document = _Document(
                frozenset((*in_name, *in_body)), sum(in_name.values()), sum(in_body.values())
            )
            documents[name] = document
            name_total += document.name_length
            body_total += document.body_length
            for term in document.terms:
                entry = (
                    in_name.get(term, 0.0),
                    in_body.get(term, 0.0),
                    document.name_length,
                    document.body_length,
                )
                grown.setdefault(term, {})[name] = entry
        for term, entries in grown.items():
            posting = postings.get(term)
            postings[term] = Map(entries) if posting is None else posting.update(entries)
            if posting is None and len(term) >= PREFIX:
                prefixes[term[:PREFIX]] = prefixes.get(term[:PREFIX], frozenset()) | {term}
        index = SearchIndex.__new__(SearchIndex)
        index._documents = documents.finish()
        index._postings = postings.finish()
        index._prefixes = prefixes.finish()
        index._name_total = name_total
        index._body_total = body_total
        index._cache = {}
        return index

    def _with_prefixes(self, concept: dict[str, float]) -> dict[str, float]:
        """``concept``, and for a word no tool uses, at ``PREFIX_WEIGHT``, the indexed words it begins or
        that begin it ("auth" finds ``authenticate``, "webhooks" ``webhook``, "mailbox" ``mail``)."""
        if any(term in self._postings for term in concept):
            return concept
        wider = dict(concept)
        for term, weight in concept.items():
            if len(term) < PREFIX or term.isdigit():
                continue
            for other in self._prefixes.get(term[:PREFIX], ()):
                if other.startswith(term) or term.startswith(other):
                    wider.setdefault(other, weight * PREFIX_WEIGHT)
        return wider

    def _scored(self, term: str) -> tuple[float, dict[str, float]] | None:
        """A term's idf and each of its documents' saturated BM25F frequency, worked out once per index."""
        found = self._cache.get(term)
        if found is not None or term not in self._postings:
            return found
        posting = self._postings[term]
        count, df = len(self._documents), len(posting)
        name_fixed, name_per_length = 1.0 - NAME_B, NAME_B / (self._name_total / count or 1.0)
        body_fixed, body_per_length = 1.0 - B, B / (self._body_total / count or 1.0)
        saturated: dict[str, float] = {}
        for name, (in_name, in_body, name_length, body_length) in posting.items():
            tf = NAME_WEIGHT * in_name / (name_fixed + name_per_length * name_length) + in_body / (
                body_fixed + body_per_length * body_length
            )
            saturated[name] = (K1 + 1.0) * tf / (tf + K1)
        found = (math.log(1.0 + (count - df + 0.5) / (df + 0.5)), saturated)
        self._cache[term] = found
        return found

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The best ``limit`` names for ``query`` with their scores, best first (ties by name)."""
        if not self._documents or limit <= 0:
            return []
        scores: dict[str, float] = {}
        for concept in map(self._with_prefixes, _concepts(query)):
            matched: list[tuple[float, dict[str, float]]] = []
            for term, weight in concept.items():
                found = self._scored(term)
                if found is not None:
                    matched.append((found[0] * weight, found[1]))
            if len(matched) == 1:  # the usual case: no dis-max needed
                ((factor, saturated),) = matched
                for name, value in saturated.items():
                    scores[name] = scores.get(name, 0.0) + factor * value
                continue
            best: dict[str, float] = {}
            for factor, saturated in matched:
                for name, value in saturated.items():
                    score = factor * value
                    if score > best.get(name, 0.0):
                        best[name] = score
            for name, score in best.items():
                scores[name] = scores.get(name, 0.0) + score
        if len(scores) > limit:
            threshold = heapq.nlargest(limit, scores.values())[-1]
            scores = {name: score for name, score in scores.items() if score >= threshold}
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
