"""Bearer tokens from a file: rotation, Secret-style swaps, and files that cannot be used."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio
import pytest

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


def test_a_kubernetes_secret_swap_rotates_and_a_missing_file_keeps_the_last_tokens(tmp_path: Path) -> None:
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
    (mount / "..data").unlink()  # mid-swap: the link is briefly gone
    assert verifier.accepts("second")


def test_an_emptied_file_keeps_the_previous_tokens_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens"
    path.write_text("keep-me\n")
    verifier = TokenFileVerifier(path)
    path.write_text("# nothing yet\n")
    with caplog.at_level(logging.WARNING, logger="loader.mcp.auth"):
        assert verifier.accepts("keep-me")
    assert "keeping the previous tokens" in caplog.text
    assert "holds no token" in caplog.text


def test_a_missing_or_empty_file_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match=r"tokens: No such file"):
        TokenFileVerifier(tmp_path / "tokens")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(TokenFileError, match="holds no token") as caught:
        TokenFileVerifier(tmp_path / "empty")
    assert caught.value.path == tmp_path / "empty"
