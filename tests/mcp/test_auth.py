"""Bearer tokens from a file: rotation, Secret-style swaps, and files that cannot be used."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from support import AS_NOBODY, interpreter_for_nobody, require

from loader.mcp.auth import TOKEN_CLIENT_ID, TokenFileError, TokenFileVerifier


def test_listed_tokens_are_accepted_and_comments_and_blanks_ignored(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team A\nalpha\n\n  beta  \n")
    verifier = TokenFileVerifier(path)
    assert verifier.accepts("alpha") and verifier.accepts("beta")
    assert not verifier.accepts("# team A") and not verifier.accepts("") and not verifier.accepts("alph")
    token = anyio.run(verifier.verify_token, "alpha")
    assert token is not None and token.client_id == TOKEN_CLIENT_ID
    assert anyio.run(verifier.verify_token, "gamma") is None


def test_a_rewritten_file_rotates_the_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("old-token\n")
    verifier = TokenFileVerifier(path)
    assert verifier.accepts("old-token")
    path.write_text("new-token-that-is-longer\n")
    assert verifier.accepts("new-token-that-is-longer")
    assert not verifier.accepts("old-token")


def test_a_kubernetes_secret_swap_rotates_the_tokens(tmp_path: Path) -> None:
    """Secret volumes are files linked through ``..data``, which the kubelet relinks to a new directory."""
    mount = tmp_path / "secret"
    (mount / "..v1").mkdir(parents=True)
    (mount / "..v1" / "tokens").write_text("first\n")
    os.symlink("..v1", mount / "..data")
    os.symlink("..data/tokens", mount / "tokens")
    verifier = TokenFileVerifier(mount / "tokens")
    assert verifier.accepts("first")
    (mount / "..v2").mkdir()
    (mount / "..v2" / "tokens").write_text("second\n")
    os.symlink("..v2", mount / "..data_tmp")
    os.rename(mount / "..data_tmp", mount / "..data")
    assert verifier.accepts("second") and not verifier.accepts("first")


def _empty(path: Path) -> None:
    path.write_text("")


def _comments_only(path: Path) -> None:
    path.write_text("# every token revoked\n\n")


def _unreadable(path: Path) -> None:
    path.chmod(0)


def _not_text(path: Path) -> None:
    path.write_bytes(b"\xff\xfe\x00 not utf-8\n")


def _deleted(path: Path) -> None:
    path.unlink()


REVOCATIONS = {
    "emptied": _empty,
    "comments only": _comments_only,
    "unreadable": _unreadable,
    "not text": _not_text,
    "deleted": _deleted,
}


@pytest.mark.parametrize("how", list(REVOCATIONS))
def test_revoking_every_token_fails_closed_and_says_so(
    how: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Emptying, commenting out, locking or deleting the file leaves no token accepted, with one error logged."""
    if how == "unreadable" and os.geteuid() == 0:
        _unreadable_as_nobody()  # root reads a file whatever its mode: the unprivileged user cannot
        return
    path = tmp_path / "tokens"
    path.write_text("revoke-me\nand-me\n")
    verifier = TokenFileVerifier(path)
    assert verifier.accepts("revoke-me")
    REVOCATIONS[how](path)
    with caplog.at_level(logging.ERROR, logger="loader.mcp.auth"):
        assert not verifier.accepts("revoke-me")
        assert not verifier.accepts("and-me")
        assert not verifier.accepts("")
    assert "no bearer token is accepted" in caplog.text
    assert str(path) in caplog.text
    assert verifier.problem is not None and verifier.problem.path == path
    assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1, "said once, not per request"


_AS_NOBODY_CHECK = """
import logging, pathlib, sys
from loader.mcp.auth import TokenFileVerifier
logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(message)s")
path = pathlib.Path(sys.argv[1])
path.chmod(0o644)
verifier = TokenFileVerifier(path)
assert verifier.accepts("revoke-me")
path.chmod(0)
assert not verifier.accepts("revoke-me") and not verifier.accepts("and-me") and not verifier.accepts("")
assert verifier.problem is not None and verifier.problem.path == path
print("revoked")
"""


def _unreadable_as_nobody() -> None:
    """The "unreadable" revocation, run by the unprivileged user on a file of its own."""
    setpriv = shutil.which("setpriv")
    require(setpriv is not None, "setpriv is not on PATH", "apt-get install util-linux")
    assert setpriv is not None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if os.path.isabs(p))
    python = interpreter_for_nobody(setpriv, env)
    require(python is not None, "no interpreter an unprivileged user may run", "install python3 under /usr")
    assert python is not None
    folder = Path(tempfile.mkdtemp(prefix="tokens-"))
    try:
        folder.chmod(0o777)
        path = folder / "tokens"
        path.write_text("revoke-me\nand-me\n")
        os.chown(path, 65534, 65534)
        done = subprocess.run(
            [setpriv, *AS_NOBODY, python, "-c", _AS_NOBODY_CHECK, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd="/",
            check=False,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0 and "revoked" in done.stdout, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "no bearer token is accepted" in errors[0] and str(path) in errors[0], (
        done.stderr
    )


def test_tokens_written_back_after_a_revocation_are_accepted_again(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("old\n")
    verifier = TokenFileVerifier(path)
    path.unlink()
    assert not verifier.accepts("old")
    path.write_text("fresh-token\n")
    assert verifier.accepts("fresh-token") and not verifier.accepts("old")
    assert verifier.problem is None


def test_a_missing_or_empty_file_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match=r"tokens: No such file"):
        TokenFileVerifier(tmp_path / "tokens")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(TokenFileError, match="holds no token") as caught:
        TokenFileVerifier(tmp_path / "empty")
    assert caught.value.path == tmp_path / "empty"
