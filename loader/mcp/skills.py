"""SEP-2640 (``io.modelcontextprotocol/skills``): ``skills/list``, ``skills/get`` and ``skill://`` reads.

A skill's entry (front matter and manifest) is assembled from one registry
snapshot. A ``resources/read`` of a ``skill://`` URI never answers bytes that
differ from the digest the client was told, however many saves happened since:

* a handshake-era connection gets the bytes of the manifest it holds (the
  files of the entries it was last given);
* a client that sends ``_meta["tool-loader/expected-digest"]`` (any era) gets
  those bytes while a recent generation has them, else a ``-32602`` error
  saying the skill changed (a fresh ``skills/get`` then matches);
* otherwise the current generation's bytes, their digest in the content's
  ``_meta["tool-loader/digest"]``.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..components.skills import SKILL_SCHEME, SkillEntry, SkillFile, skill_entries
from ..registry.snapshot import RegistrySnapshot
from ..types import ComponentKind

__all__ = [
    "SKILLS_EXTENSION",
    "SKILL_META_KEY",
    "VERSIONS_KEPT",
    "ServedSkills",
    "SkillChanged",
    "SkillGetParams",
]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The extension identifier servers declare under ``capabilities.extensions``."""
SKILL_META_KEY = "tool-loader/skill"
"""In a tool's ``_meta``: the skill (its path below ``skills/``) whose ``tools/`` folder holds it."""

VERSIONS_KEPT = 8
"""Versions of each skill file kept for clients that name the digest they expect."""

_Context = ServerRequestContext[dict[str, Any]]
_CACHE = {"ttlMs": 0, "cacheScope": "private"}
"""As every list here (``LISTING_CACHE_HINT``): a save can change a skill at any moment."""


class SkillGetParams(types.RequestParams):
    """``skills/get`` params: the URI of a skill's ``SKILL.md``."""

    uri: str


class SkillChanged(MCPError):
    """The file's bytes under the digest the client expects are gone: its skill changed."""

    def __init__(self, uri: str, expected: str, current: str | None) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"The skill changed: {uri} is no longer {expected}; call skills/get for its current manifest",
            {"uri": uri, "expected": expected, "current": current},
        )


class ServedSkills:
    """The skills methods over ``current()``'s snapshot, and the manifests each connection holds."""

    def __init__(self, current: Callable[[], RegistrySnapshot]) -> None:
        self._current = current
        self._entries: tuple[int, tuple[SkillEntry, ...]] = (-1, ())
        # Per connection (the id of its client_params, which lives as long as it does, and is dropped
        # with it): file URI -> the file its last entries listed.
        self._held: dict[int, dict[str, SkillFile]] = {}
        self._recent: OrderedDict[tuple[str, str], SkillFile] = OrderedDict()  # (uri, digest) -> file

    def entries(self) -> tuple[SkillEntry, ...]:
        """The served skills of the current snapshot (within SEP-2640's limits), built once per generation."""
        snapshot = self._current()
        generation, found = self._entries
        if generation != snapshot.generation:
            everything = snapshot.components(ComponentKind.SKILL) + snapshot.components(
                ComponentKind.SKILL_FILE
            )
            found = tuple(e for e in skill_entries(everything) if e.problem is None)
            self._entries = (snapshot.generation, found)
            self._remember(found)
        return found

    async def list_skills(self, ctx: _Context, params: types.PaginatedRequestParams) -> dict[str, Any]:
        entries = self.entries()
        self._hold(ctx, entries)
        return {"resultType": "complete", "skills": [e.wire() for e in entries], **_CACHE}

    async def get_skill(self, ctx: _Context, params: SkillGetParams) -> dict[str, Any]:
        for entry in self.entries():
            if entry.skill.uri == params.uri:
                self._hold(ctx, (entry,))
                return {"resultType": "complete", "skill": entry.wire(), **_CACHE}
        raise MCPError(INVALID_PARAMS, f"No skill at {params.uri}", {"uri": params.uri})

    def read(self, ctx: _Context, uri: str, expected: object = None) -> SkillFile | None:
        """The file at ``uri``: under the ``expected`` digest, else as this connection's manifest lists it,
        else as the current generation has it.

        Raises:
            SkillChanged: ``expected`` names bytes no recent generation holds.
        """
        found = self._current().component(ComponentKind.SKILL_FILE, uri)
        current = found if isinstance(found, SkillFile) else None
        if isinstance(expected, str):
            if current is not None and current.digest == expected:
                return current
            self.entries()  # the current generation's files are remembered too
            kept = self._recent.get((uri, expected))
            if kept is None:
                raise SkillChanged(uri, expected, None if current is None else current.digest)
            return kept
        held = self._held.get(id(ctx.session.client_params))
        if held is not None and uri in held:
            return held[uri]
        return current

    def _remember(self, entries: tuple[SkillEntry, ...]) -> None:
        files = {f.uri: f for e in entries for f in e.files}
        for file in files.values():
            self._recent[(file.uri, file.digest)] = file
            self._recent.move_to_end((file.uri, file.digest))
        while len(self._recent) > VERSIONS_KEPT * max(len(files), 1):
            self._recent.popitem(last=False)

    def _hold(self, ctx: _Context, entries: tuple[SkillEntry, ...]) -> None:
        key = ctx.session.client_params
        if key is None:
            return
        held = self._held.get(id(key))
        if held is None:
            held = self._held[id(key)] = {}
            weakref.finalize(key, self._held.pop, id(key), None)
        for entry in entries:
            prefix = entry.skill.uri.removesuffix("SKILL.md")
            for uri in [u for u in held if u.startswith(prefix)]:
                del held[uri]  # a file the new manifest no longer lists reads as current
            held.update((f.uri, f) for f in entry.files)

    @staticmethod
    def serves(uri: str) -> bool:
        """Whether ``uri`` is a ``skill://`` URI."""
        return uri.startswith(f"{SKILL_SCHEME}://")
