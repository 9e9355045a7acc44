"""Compiled tool files kept between starts, keyed by each file's path and content hash.

Compiling is about a quarter of a tool file's import, and a start loads every
file of the folders. Python's own ``__pycache__`` is keyed by the source's mtime
and size, the very key that serves stale code when an edit keeps both (a
common cause of reload bugs), and it would write into the watched folders. So
the loader keeps its own cache, outside them:

* one pack file per set of watched folders, in a private cache folder
  (``$TOOL_LOADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/tool-loader``, else
  ``~/.cache/tool-loader``), named for the folders, the Python bytecode version
  and the optimisation level;
* an entry is used only for the same path with the same sha256 of its bytes
  (the hash the loader computes anyway), so no edit can be served stale code;
* a scan reads the pack once and writes it once at its end, with exactly the
  files that scan loaded (a deleted file's entry goes), and only if something
  changed; saves while watching compile as before and write nothing, so the
  save path does no extra work;
* the cache runs code, like the tool files: the folder must be the user's own
  and writable by nobody else (else the cache is not used, with a warning),
  and the pack is replaced whole (written beside, then renamed), so a reader
  never sees half of one. Anything unreadable is a miss, never an error;
* ``sys.dont_write_bytecode`` (``PYTHONDONTWRITEBYTECODE``) is honoured: the
  pack is read but never written.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import marshal
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import CodeType

__all__ = ["CACHE_DIR_ENV", "BytecodeCache", "default_cache_dir", "private_cache_dir"]

logger = logging.getLogger(__name__)

CACHE_DIR_ENV = "TOOL_LOADER_CACHE_DIR"
"""The environment variable naming the cache folder; ``off`` turns the cache off."""

_HEADER = b"tool-loader bytecode 1\n" + importlib.util.MAGIC_NUMBER
_Entry = tuple[str, bytes]  # (sha256 of the source, marshalled code)


def default_cache_dir() -> Path | None:
    """Where packs are kept; None when ``$TOOL_LOADER_CACHE_DIR`` is ``off``."""
    named = os.environ.get(CACHE_DIR_ENV)
    if named:
        return None if named.strip().lower() == "off" else Path(named)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "tool-loader"


def private_cache_dir() -> Path | None:
    """``default_cache_dir()``, made (mode 0700) if needed, when it is this user's own and writable by
    nobody else; None when it is off, cannot be made, or is shared (said in a warning)."""
    folder = default_cache_dir()
    return folder if folder is not None and _private(folder) else None


def _private(folder: Path) -> bool:
    """Make ``folder`` (mode 0700) if needed; whether it is ours and writable by nobody else."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder)
    except OSError as exc:
        logger.debug("folder=<%s> | cache folder unusable: %s", folder, exc)
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    problem = _shared(st)
    if problem:
        logger.warning("folder=<%s> | cache folder %s; not used", folder, problem)
        return False
    return True


def _shared(st: os.stat_result) -> str:
    """Why a cache folder or file with this stat is not private to this user ("" if it is).

    POSIX only: Windows reports no owner and no group or other write bits to check.
    """
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return ""
    if st.st_uid != getuid():
        return "not owned by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by others"
    return ""


class BytecodeCache:
    """The compiled code of one set of watched folders' files, from the last scan.

    ``code`` is called on import threads; ``record``/``save`` bracket a scan on the
    loader's thread. ``hits`` and ``misses`` count the lookups since it was made.
    """

    def __init__(self, pack: Path) -> None:
        self.pack = pack
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._used: dict[str, _Entry] = {}
        self._recording = False

    @classmethod
    def for_roots(cls, roots: Sequence[Path], folder: Path | None = None) -> BytecodeCache | None:
        """The cache of these watched folders in ``folder`` (default ``default_cache_dir()``), if usable."""
        folder = folder if folder is not None else default_cache_dir()
        if folder is None or not _private(folder):
            return None
        key = "\0".join(sorted(os.path.realpath(root) for root in roots))
        name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        tag = sys.implementation.cache_tag or "python"
        return cls(folder / f"{name}.{tag}.opt{sys.flags.optimize}.pack")

    def record(self) -> None:
        """A scan begins: read the pack, and remember what this scan compiles or reuses."""
        entries = self._read()
        with self._lock:
            self._entries, self._used, self._recording = entries, {}, True

    def code(self, path: str, digest: str, source: bytes) -> CodeType:
        """The code of ``source`` (sha256 ``digest``) at ``path``: from the pack, else compiled.

        Raises:
            SyntaxError: The source does not compile (as ``compile`` raises it).
        """
        entry = self._entries.get(path)
        if entry is not None and entry[0] == digest:
            try:
                code = marshal.loads(entry[1])
            except (EOFError, ValueError, TypeError):
                code = None
            if isinstance(code, CodeType) and code.co_filename == path:
                with self._lock:
                    self.hits += 1
                    if self._recording:
                        self._used[path] = entry
                return code
        code = compile(source, path, "exec", dont_inherit=True)
        with self._lock:
            self.misses += 1
            if self._recording:
                self._used[path] = (digest, marshal.dumps(code))
        return code

    def save(self) -> None:
        """The scan is over: write the pack if it changed (unless bytecode writing is off); hold nothing."""
        with self._lock:
            used, entries = self._used, self._entries
            self._entries, self._used, self._recording = {}, {}, False
        if sys.dont_write_bytecode or used == entries:
            return
        try:
            data = _HEADER + marshal.dumps(used)
            handle, temporary = tempfile.mkstemp(dir=self.pack.parent, prefix=".pack-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temporary, self.pack)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as exc:  # a full or read-only disk: the next start compiles again
            logger.debug("pack=<%s> | bytecode cache not written: %s", self.pack, exc)

    def paths(self) -> set[str]:
        """The source paths the pack on disk holds code for."""
        return set(self._read())

    def _read(self) -> dict[str, _Entry]:
        """The pack's entries; empty if it is missing, foreign, not ours or damaged."""
        try:
            with open(self.pack, "rb") as handle:
                problem = _shared(os.fstat(handle.fileno()))
                if problem:
                    logger.warning("pack=<%s> | bytecode cache file %s; ignored", self.pack, problem)
                    return {}
                data = handle.read()
        except OSError:
            return {}
        if not data.startswith(_HEADER):
            return {}
        try:
            entries = marshal.loads(data[len(_HEADER) :])
        except (EOFError, ValueError, TypeError):
            return {}
        if not isinstance(entries, dict):
            return {}
        return {
            key: value
            for key, value in entries.items()
            if isinstance(key, str)
            and isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], bytes)
        }
