"""NameListing: sorted names patched from a predecessor's listing instead of sorted afresh."""

from __future__ import annotations

from loader.registry.name_listing import DELTA_LIMIT, NameListing


def test_a_fresh_listing_sorts_the_keys() -> None:
    assert NameListing().resolve(["b", "c", "a"]) == ("a", "b", "c")


def test_a_successor_patches_its_base_without_reading_the_keys() -> None:
    base = NameListing(("a", "c", "e"))
    following = base.successor(added=["b", "f"], removed=["c"])
    # The keys are ignored when a base is known: the patch alone gives the answer.
    assert following.resolve(["not", "read"]) == ("a", "b", "e", "f")
    assert following.known == ("a", "b", "e", "f")


def test_deltas_of_unread_listings_accumulate_and_the_last_word_wins() -> None:
    first = NameListing(("a", "b"))
    second = first.successor(added=["c"], removed=["a"])
    third = second.successor(added=["a"], removed=["c"])
    assert second.known is None and third.known is None
    assert third.resolve(["not", "read"]) == ("a", "b")
    assert second.resolve(["not", "read"]) == ("b", "c")


def test_a_large_delta_falls_back_to_sorting() -> None:
    added = [f"n{i:04d}" for i in range(DELTA_LIMIT + 1)]
    following = NameListing(()).successor(added=added, removed=[])
    assert following.resolve(reversed(added)) == tuple(added)


def test_a_successor_of_an_unknown_listing_sorts() -> None:
    assert NameListing().successor(added=["x"], removed=[]).resolve(["y", "x"]) == ("x", "y")
