"""``path_key`` sorts paths exactly as ``Path`` comparison does."""

from __future__ import annotations

import itertools
from pathlib import Path

from loader.reload.path_order import path_key, sorted_paths


def test_path_key_orders_like_path_comparison() -> None:
    # Components that are prefixes of one another, followed by characters below and above "/".
    names = ["a", "a-b", "a.b", "a b", "a~", "ab", "B", "é", "a0"]
    paths = {Path("/root", *parts) for n in (1, 2, 3) for parts in itertools.product(names, repeat=n)}
    assert sorted_paths(paths) == sorted(paths)
    assert sorted(paths, key=path_key, reverse=True) == sorted(paths, reverse=True)
