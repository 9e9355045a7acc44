"""Tool search: ranking on real tool text, and an index that is part of each registry commit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support import write

from loader import FunctionTool, ToolLoader, ToolRegistry, tool
from loader.fingerprint import tool_digest


@tool
def get_weather_forecast(city: str, days: int = 3) -> str:
    """Return the forecast for a city over the next days."""
    return ""


@tool(search_hint="rain umbrella temperature outside")
def current_conditions(location: str) -> str:
    """What it is like at a place right now."""
    return ""


@tool
def deleteGithubIssue(repo: str, number: int) -> str:
    """Remove an issue from a GitHub repository."""
    return ""


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send a message to an address."""
    return ""


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for item in (get_weather_forecast, current_conditions, deleteGithubIssue, send_email):
        registry.register(item)
    return registry


def _top(registry: ToolRegistry, query: str) -> str | None:
    hits = registry.search_tools(query, limit=1)
    return hits[0].name if hits else None


def test_ranking_uses_name_parts_stems_hints_parameters_and_action_synonyms() -> None:
    registry = _registry()
    assert _top(registry, "forecasts") == "get_weather_forecast"  # stemmed, from a snake_case part
    assert _top(registry, "github issues") == "deleteGithubIssue"  # camelCase parts
    assert _top(registry, "do I need an umbrella") == "current_conditions"  # search_hint only
    assert _top(registry, "email subject") == "send_email"  # a parameter name
    assert _top(registry, "erase a github issue") == "deleteGithubIssue"  # erase ~ delete
    assert registry.search_tools("zebra quantum", limit=5) == []


def test_a_hit_carries_what_a_model_needs_to_call_it() -> None:
    registry = _registry()
    (hit,) = registry.search_tools("forecast", limit=1)
    assert hit.description == "Return the forecast for a city over the next days."
    assert hit.input_schema["required"] == ["city"]
    assert hit.digest == tool_digest(get_weather_forecast)
    assert len(registry.search_tools("a", limit=0)) == 0
    assert len(registry.search_tools("issue forecast email conditions", limit=2)) == 2


def test_each_snapshot_finds_what_it_can_call() -> None:
    registry = _registry()
    before = registry.snapshot()
    registry.unregister("send_email")
    registry.replace(FunctionTool(lambda: "", name="send_email_v2", description="Send a message by post."))
    after = registry.snapshot()
    assert [hit.name for hit in before.search_tools("send message")][:1] == ["send_email"]
    assert "send_email" not in {hit.name for hit in after.search_tools("send message email", limit=10)}
    assert after.search_tools("send message")[0].name == "send_email_v2"


def _hits_and_calls(loader: ToolLoader, stop: threading.Event, refused: list[str], found: list[int]) -> None:
    """Search and call every hit until told to stop; record each hit the registry refused as unknown."""
    while not stop.is_set():
        snapshot = loader.registry.snapshot()
        for hit in snapshot.search_tools("storm tool", limit=20):
            found.append(1)
            if hit.name not in loader.registry and hit.name not in snapshot:
                refused.append(hit.name)
            result = snapshot.invoke(hit.name, {})
            if result["status"] != "success":
                refused.append(f"{hit.name}: {result['content']}")


def _storm(loader: ToolLoader, tools: Path, rounds: int) -> None:
    """Saves and deletes, five files at a time, letting every fifth round settle."""
    for n in range(rounds):
        path = tools / f"storm_{n % 5}.py"
        if n % 3 == 2:
            path.unlink(missing_ok=True)
        else:
            write(
                path,
                f'from loader import tool\n\n@tool\ndef storm_tool_{n}() -> str:\n    """Storm."""\n    return "ok"\n',
            )
        if n % 5 == 4:
            assert loader.wait_idle(30)


def test_save_storm_never_finds_a_tool_it_cannot_call(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    loader = make_loader(tools_dir)
    stop, refused, found = threading.Event(), list[str](), list[int]()
    searcher = threading.Thread(target=_hits_and_calls, args=(loader, stop, refused, found), daemon=True)
    searcher.start()
    try:
        _storm(loader, tools_dir, 40)
        assert loader.wait_idle(30)
    finally:
        stop.set()
        searcher.join(10)
    assert found, "the searcher never found a storm tool"
    assert refused == []
    assert {hit.name for hit in loader.search_tools("storm tool", limit=20)} == {
        name for name in loader.registry.names() if name.startswith("storm_tool_")
    }


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_search_hint_and_always_load_reach_the_index_in_every_isolation_mode(
    tools_dir: Path, make_loader: Callable[..., ToolLoader]
) -> None:
    write(
        tools_dir / "hinted.py",
        "from loader import tool\n\n"
        "@tool(search_hint='umbrella drizzle', always_load=True)\n"
        "def conditions(place: str) -> str:\n"
        '    """What it is like at a place."""\n'
        "    return place\n",
    )
    loader = make_loader(tools_dir, watch=False)
    assert [hit.name for hit in loader.search_tools("drizzle")] == ["conditions"]
    found = loader.registry.get("conditions")
    assert found is not None and found.always_load and found.search_hint == "umbrella drizzle"


def test_a_class_tool_takes_search_hint_and_always_load() -> None:
    @tool(search_hint="parcel courier", always_load=True)
    class ShipIt:
        """Send a package."""

        def execute(self, params: dict[str, str]) -> str:
            return "sent"

    registry = ToolRegistry()
    registry.register(ShipIt())
    (hit,) = registry.search_tools("courier", limit=1)
    found = registry.get(hit.name)
    assert hit.name == "ship_it" and found is not None and found.always_load


def _tools(*specs: tuple[str, str]) -> ToolRegistry:
    """A registry of argument-less tools, each a name and a description."""
    registry = ToolRegistry()
    for name, description in specs:
        registry.register(FunctionTool(lambda: "", name=name, description=description))
    return registry


def test_a_phrasal_verb_counts_as_the_verb_tool_names_use() -> None:
    registry = _tools(
        ("merge_pull_request", "Merge a pull request."),
        ("get_invoice", "Fetch one invoice."),
        ("delete_invoice", "Remove an invoice."),
        ("list_orders", "List orders."),
        ("orders_count", "Orders."),
    )
    assert _top(registry, "pull up the invoice") == "get_invoice"  # not the tool named after "pull"
    assert _top(registry, "get rid of the invoice") == "delete_invoice"  # not the one named "get"
    assert _top(registry, "how many orders") == "orders_count"


def test_an_entity_synonym_or_abbreviation_finds_the_tool_named_otherwise() -> None:
    registry = _tools(
        ("list_repositories", "List the repositories of an organization."),
        ("get_invoice", "Fetch one invoice."),
        ("close_ticket", "Close a support ticket."),
        ("weather", "Forecast."),
    )
    assert _top(registry, "show my repos") == "list_repositories"
    assert _top(registry, "pull up the bill") == "get_invoice"
    assert _top(registry, "close the bug") == "close_ticket"
    assert registry.search_tools("zebra", limit=5) == []


def test_an_irregular_plural_finds_the_singular() -> None:
    registry = _tools(("add_person", "Add to the team."), ("add_index", "Add to a table."))
    assert _top(registry, "people") == "add_person"
    assert _top(registry, "indices") == "add_index"


def test_a_long_description_does_not_dilute_a_match_in_the_name() -> None:
    long = " ".join(f"word{n}" for n in range(150))  # 300 words, none of them "forecast"
    registry = _tools(
        ("forecast", f"Looks ahead. {long}"),
        ("weather_report", "Today's forecast for the region, with wind, rain and temperature."),
    )
    assert _top(registry, "forecast") == "forecast"


def test_a_word_no_tool_uses_matches_the_words_it_begins_or_that_begin_it() -> None:
    registry = _tools(
        ("authenticate_user", "Log a user in."),
        ("read_mail", "Read the newest messages."),
        ("weather", "Forecast."),
    )
    assert _top(registry, "auth") == "authenticate_user"  # a truncation
    assert _top(registry, "mailbox") == "read_mail"  # a compound
    assert registry.search_tools("wea", limit=5) == []  # too short to match by prefix
    registry.unregister("authenticate_user")
    assert registry.search_tools("auth", limit=5) == []  # the prefix went with the tool
