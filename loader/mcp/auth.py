"""Bearer tokens from a file, as an MCP SDK ``TokenVerifier``: simple auth a fleet mounts from a Secret.

One token per line (blank lines and ``#`` comments ignored). The file is
re-read when it changes (Kubernetes swaps Secret volumes by relinking), so
tokens rotate without a restart. Revocation fails closed: a file that is
emptied, left with comments only, made unreadable or deleted accepts no token
until it lists one again (an operator revoking every token by emptying the
Secret must not find the last ones still working). Every comparison is
constant-time and checks every token, so timing says nothing about which one
nearly matched.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from ..errors import ToolLoaderError

__all__ = ["TOKEN_CLIENT_ID", "TokenFileError", "TokenFileVerifier", "read_tokens"]

logger = logging.getLogger(__name__)

TOKEN_CLIENT_ID = "token-file"
"""The client id an accepted static token is given (static tokens carry no identity)."""


class TokenFileError(ToolLoaderError):
    """The token file cannot be read, or holds no token."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"auth token file {path}: {reason}")
        self.path = path


def read_tokens(path: Path) -> tuple[bytes, ...]:
    """The tokens in ``path``, one per line; raises ``TokenFileError`` if unreadable or empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TokenFileError(path, exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise TokenFileError(path, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    tokens = tuple(
        line.strip().encode()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
    if not tokens:
        raise TokenFileError(path, "holds no token (one token per line)")
    return tokens


_Signature = tuple[int, int, int, int, int]


def _signature(path: Path) -> _Signature | None:
    """What changes when the file is rewritten, relinked, or has its permissions changed (ctime, mode)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_mode)


class TokenFileVerifier:
    """Accepts a bearer token listed in a file; reloads the file whenever its stat changes.

    A file that cannot be used any more (missing, unreadable, no token in it)
    accepts nothing: revocation fails closed. Kubernetes swaps a Secret by
    renaming a link, which never leaves the file missing, so there is no
    "mid-swap" moment to keep old tokens for.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Read the tokens now, so a missing or empty file fails at start-up (``TokenFileError``)."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._signature = _signature(self.path)
        self._tokens = read_tokens(self.path)
        self.problem: TokenFileError | None = None
        """Why no token is accepted right now (None while the file lists tokens)."""

    def _current(self) -> tuple[bytes, ...]:
        signature = _signature(self.path)
        if signature == self._signature:
            return self._tokens
        with self._lock:
            if signature != self._signature:
                self._reload(signature)
            return self._tokens

    def _reload(self, signature: _Signature | None) -> None:
        """Read the changed file; anything but a list of tokens leaves none accepted, said loudly."""
        self._signature = signature
        try:
            self._tokens = read_tokens(self.path)
        except TokenFileError as exc:
            self._tokens = ()
            self.problem = exc
            logger.error(
                "path=<%s> | no bearer token is accepted until the file lists one: %s", self.path, exc
            )
            return
        if self.problem is not None:
            logger.warning(
                "path=<%s>, tokens=<%d> | bearer tokens accepted again", self.path, len(self._tokens)
            )
        self.problem = None

    def accepts(self, token: str) -> bool:
        """Whether ``token`` is listed, compared in constant time against every listed token."""
        candidate = token.strip().encode()
        matched = False
        for known in self._current():
            matched |= hmac.compare_digest(candidate, known)
        return matched

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's ``TokenVerifier`` protocol: an access token for a listed token, else None."""
        if not self.accepts(token):
            return None
        return AccessToken(token=token, client_id=TOKEN_CLIENT_ID, scopes=[])
