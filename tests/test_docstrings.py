"""Docstring parsing: the description without parameter/return/raise sections, and parameter descriptions."""

from __future__ import annotations

from loader.tools.docstrings import ParsedDocstring, docstring_of, parse_docstring

GOOGLE = """Get the weather.

    Fetches a forecast from the service.
    Cached for ten minutes.

    Args:
        city: The city name.
        days (int): How many days,
            at most fourteen.
        unit:

    Returns:
        A forecast dict.

    Raises:
        ValueError: If the city is unknown.

    Example:
        >>> weather("Oslo")
    """

REST = """Get the weather.

    Fetches a forecast from the service.

    :param city: The city name.
    :param int days: How many days.
    :returns: A forecast dict.
    :raises ValueError: If the city is unknown.
    """

NUMPY = """Get the weather.

    Fetches a forecast from the service.

    Parameters
    ----------
    city : str
        The city name.
    days : int, optional
        How many days.

    Returns
    -------
    dict
        A forecast.

    Raises
    ------
    ValueError
        If the city is unknown.
    """


def test_google_style_keeps_summary_and_body_only() -> None:
    parsed = parse_docstring(GOOGLE)
    assert parsed == ParsedDocstring(
        description="Get the weather.\n\nFetches a forecast from the service.\nCached for ten minutes.",
        params={"city": "The city name.", "days": "How many days,\nat most fourteen."},
    )


def test_rest_style_keeps_summary_and_body_only() -> None:
    parsed = parse_docstring(REST)
    assert parsed.description == "Get the weather.\n\nFetches a forecast from the service."
    assert dict(parsed.params) == {"city": "The city name.", "days": "How many days."}


def test_numpy_style_keeps_summary_and_body_only() -> None:
    parsed = parse_docstring(NUMPY)
    assert parsed.description == "Get the weather.\n\nFetches a forecast from the service."
    assert dict(parsed.params) == {"city": "The city name.", "days": "How many days."}


def test_summary_only() -> None:
    assert parse_docstring("Add two numbers.") == ParsedDocstring(description="Add two numbers.", params={})


def test_summary_wrapped_onto_next_line_stays_joined_by_one_newline() -> None:
    parsed = parse_docstring("Add two numbers\nand return the sum.\n\nArgs:\n    a: first")
    assert parsed.description == "Add two numbers\nand return the sum."
    assert dict(parsed.params) == {"a": "first"}


def test_only_sections_gives_empty_description() -> None:
    parsed = parse_docstring("\n    Args:\n        a: first\n        b: second\n    ")
    assert parsed.description == ""
    assert dict(parsed.params) == {"a": "first", "b": "second"}


def test_missing_or_blank_docstring() -> None:
    assert parse_docstring(None) == ParsedDocstring()
    assert parse_docstring("   \n  ") == ParsedDocstring()


def test_docstring_of_reads_functions() -> None:
    def fn(a: int) -> int:
        """Double a number.

        Args:
            a: The number.
        """
        return a * 2

    def bare() -> None:
        pass

    assert docstring_of(fn) == ParsedDocstring(description="Double a number.", params={"a": "The number."})
    assert docstring_of(bare) == ParsedDocstring()


def test_params_mapping_is_read_only() -> None:
    parsed = parse_docstring("Do.\n\nArgs:\n    a: first\n")
    try:
        parsed.params["b"] = "x"  # type: ignore[index]
    except TypeError:
        pass
    else:  # pragma: no cover - the assertion below explains the failure
        raise AssertionError("params should be read-only")
    assert dict(parsed.params) == {"a": "first"}
