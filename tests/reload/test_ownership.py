"""Name ownership: first come, first served, independent of history; moves keep their names."""

from __future__ import annotations

from pathlib import Path

from loader.reload.ownership import NameOwnership, choose_owner

A, B, C = Path("/t/a.py"), Path("/t/b.py"), Path("/t/c.py")


def test_choose_owner_keeps_the_current_owner_while_it_claims() -> None:
    assert choose_owner(B, [(0, A), (1, B)]) == B
    assert choose_owner(C, [(0, A), (1, B)]) == A
    assert choose_owner(None, [(3, B), (1, A)]) == A
    assert choose_owner(A, []) is None


def test_first_claim_wins_and_the_next_takes_over_when_it_lets_go() -> None:
    own = NameOwnership()
    own.claim(A, ["greet"])
    own.claim(B, ["greet"])
    change = own.settle()
    assert change.names == {"greet"} and own.owner("greet") == A
    assert own.claimants("greet") == (A, B)
    own.release(A)
    change = own.settle()
    assert own.owner("greet") == B and change.before == {"greet": A}


def test_names_are_normalised() -> None:
    own = NameOwnership()
    own.claim(A, ["get-time"])
    own.settle()
    assert own.owner("get_time") == A


def test_reclaiming_keeps_the_original_order() -> None:
    own = NameOwnership()
    own.claim(A, ["greet"])
    own.claim(B, ["greet"])
    own.settle()
    own.claim(A, ["greet", "other"])  # A edited: still first for greet
    own.settle()
    assert own.owner("greet") == A and own.owner("other") == A


def test_settle_reports_every_name_of_a_file_that_claimed_again() -> None:
    # A file that loaded again serves new tool objects, so all its names must be re-committed.
    own = NameOwnership()
    own.claim(A, ["x", "y"])
    own.claim(B, ["z"])
    own.settle()
    own.claim(A, ["x"])
    assert own.settle().names == {"x", "y"}
    assert own.owner("y") is None
    assert own.settle().names == frozenset()


def test_a_moved_file_keeps_its_names_over_a_conflicting_file() -> None:
    own = NameOwnership()
    own.claim(A, ["greet"])
    own.claim(B, ["greet"])
    own.settle()
    own.transfer(A, C)  # mv a.py c.py
    own.release(A)
    own.claim(C, ["greet"])
    own.settle()
    assert own.owner("greet") == C
    assert own.claimants("greet") == (C, B)
