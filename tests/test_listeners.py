"""``Listeners``: one subscription ended by its own unsubscribe, every listener told, a raising one logged."""

from __future__ import annotations

import logging

import pytest

from loader.listeners import Listeners

_LOGGER = logging.getLogger("tests.listeners")


def test_each_unsubscribe_ends_only_its_own_subscription() -> None:
    heard: list[int] = []
    listeners: Listeners[int] = Listeners("test", _LOGGER)
    assert not listeners
    first = listeners.subscribe(heard.append)
    listeners.subscribe(heard.append)
    assert listeners
    listeners.tell(1)
    first()
    first()  # a second call changes nothing
    listeners.tell(2)
    assert heard == [1, 1, 2]


def test_a_raising_listener_is_logged_and_the_next_still_hears(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[str] = []

    def broken(news: str) -> None:
        raise RuntimeError(news)

    listeners: Listeners[str] = Listeners("test", _LOGGER)
    listeners.subscribe(broken)
    listeners.subscribe(heard.append)
    with caplog.at_level(logging.ERROR, logger=_LOGGER.name):
        listeners.tell("news")
    assert heard == ["news"]
    assert "test listener raised" in caplog.text


def test_who_subscribes_while_news_is_told_hears_from_the_next_news_on() -> None:
    heard: list[str] = []
    listeners: Listeners[str] = Listeners("test", _LOGGER)

    def late(news: str) -> None:
        heard.append(f"late {news}")

    def first(news: str) -> None:
        heard.append(news)
        if news == "one":
            listeners.subscribe(late)

    listeners.subscribe(first)
    listeners.tell("one")
    listeners.tell("two")
    assert heard == ["one", "two", "late two"]
