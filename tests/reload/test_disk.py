"""Reading a tool file: bytes with the stat they came from, and "gone" told apart from "unreadable"."""

from __future__ import annotations

import hashlib
from pathlib import Path

from loader.reload.disk import IS_A_LINK, read_file_stat, read_unlinked_file
from loader.reload.file_state import source_read


def test_a_read_file_is_hashed_with_its_signature_and_a_vanished_or_unreadable_one_is_told_apart(
    tmp_path: Path,
) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    for reader in (read_file_stat, read_unlinked_file):
        read = reader(f)
        assert isinstance(read, tuple), reader
        got = source_read(*read)
        assert got.data == b"x = 1\n" and got.digest == hashlib.sha256(b"x = 1\n").hexdigest()
        assert got.signature == (f.stat().st_ino, 6, f.stat().st_mtime_ns)
        assert reader(tmp_path / "gone.py") is None, reader
    (tmp_path / "dir.py").mkdir()
    assert isinstance(read_file_stat(tmp_path / "dir.py"), IsADirectoryError)
    assert read_unlinked_file(tmp_path / "dir.py") is None  # a folder holds no file
    (tmp_path / "link.py").symlink_to(f)
    assert read_unlinked_file(tmp_path / "link.py") == IS_A_LINK
    assert isinstance(read_file_stat(tmp_path / "link.py"), tuple)  # the plain reader follows it
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    assert isinstance(read_file_stat(tmp_path / "dangling.py"), FileNotFoundError)  # there, unreadable
