"""Which file owns a tool name when several define it.

The rule is first come, first served, and it must not depend on history:
every (file, name) claim gets an order number when the file first defines the
name; the owner is the current owner while it still claims the name, else the
claimant with the lowest order. A moved file carries its orders with it, so
``mv greet.py hello.py`` keeps ``greet`` with the file that had it.

Names are compared normalised (``-`` and ``_`` are the same), as the registry does.
Prompts, resources and resource templates are claimed here too, by their
``component_id`` (``prompt:review``): a ``:`` never appears in a tool name, so
the two never meet, and a component id is compared as it is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..names import normalise_tool_name

__all__ = ["NameOwnership", "OwnershipChange", "choose_owner", "is_component_key", "ownership_key"]


def is_component_key(key: str) -> bool:
    """Whether an ownership key is a component id (``prompt:review``) rather than a tool name."""
    return ":" in key


def ownership_key(name: str) -> str:
    """The key ``name`` is claimed under: a tool name normalised, a component id as it is."""
    return name if is_component_key(name) else normalise_tool_name(name)


def choose_owner(current: Path | None, claimants: Iterable[tuple[int, Path]]) -> Path | None:
    """The owner of one name: ``current`` while it still claims it, else the earliest claimant."""
    ordered = sorted(claimants)
    if current is not None and any(path == current for _, path in ordered):
        return current
    return ordered[0][1] if ordered else None


@dataclass(frozen=True, slots=True)
class OwnershipChange:
    """The names whose claims changed since the last settle, and who owned them before."""

    names: frozenset[str]
    before: Mapping[str, Path]


class NameOwnership:
    """Claims of tool names by files, and the owner of each name (one loader's scheduler thread)."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self._owners: dict[str, Path] = {}
        self._claims: dict[Path, dict[str, int]] = {}
        self._claimants: dict[str, dict[Path, int]] = {}
        self._dirty: set[str] = set()

    def owner(self, name: str) -> Path | None:
        """The file that owns ``name`` (normalised) as of the last settle."""
        return self._owners.get(ownership_key(name))

    def claimants(self, name: str) -> tuple[Path, ...]:
        """Every file claiming ``name``, earliest claim first."""
        waiting = self._claimants.get(ownership_key(name), {})
        return tuple(path for _, path in sorted((order, path) for path, order in waiting.items()))

    def claiming(self, name: str) -> Iterable[Path]:
        """Every file claiming ``name``, in no particular order (``claimants`` sorts them)."""
        return self._claimants.get(ownership_key(name), {}).keys()

    def claim(self, path: Path, names: Iterable[str]) -> None:
        """``path`` now defines exactly ``names``; names it already claimed keep their order."""
        old = self._claims.get(path, {})
        new = {}
        for key in (ownership_key(n) for n in names):
            new[key] = old[key] if key in old else next(self._counter)
        self._set(path, new)

    def release(self, path: Path) -> None:
        """``path`` defines nothing any more."""
        self._set(path, {})

    def transfer(self, old: Path, new: Path) -> None:
        """A move: ``new`` takes over ``old``'s claims, orders included."""
        claims = self._claims.get(old, {})
        self._set(old, {})
        self._set(new, dict(claims))
        for key, owner in self._owners.items():
            if owner == old and key in claims:
                self._owners[key] = new

    def touch(self, names: Iterable[str]) -> None:
        """Have the next ``settle`` decide over ``names`` again (their serving tool changes by fiat)."""
        self._dirty.update(normalise_tool_name(name) for name in names)

    def settle(self) -> OwnershipChange:
        """Decide the owner of every name whose claims changed; returns what was decided over."""
        affected, self._dirty = frozenset(self._dirty), set()
        before = {key: self._owners[key] for key in affected if key in self._owners}
        for key in affected:
            waiting = self._claimants.get(key, {})
            if len(waiting) == 1:  # most names: one claimant owns it, whoever owned it before
                owner: Path | None = next(iter(waiting))
            else:
                owner = choose_owner(
                    self._owners.get(key), ((order, path) for path, order in waiting.items())
                )
            if owner is None:
                self._owners.pop(key, None)
            else:
                self._owners[key] = owner
        return OwnershipChange(affected, before)

    def _set(self, path: Path, claims: dict[str, int]) -> None:
        old = self._claims.pop(path, {})
        self._dirty.update(old)
        self._dirty.update(claims)
        for key in old:
            waiting = self._claimants.get(key)
            if waiting is not None:
                waiting.pop(path, None)
                if not waiting:
                    del self._claimants[key]
        if claims:
            self._claims[path] = claims
        for key, order in claims.items():
            self._claimants.setdefault(key, {})[path] = order
