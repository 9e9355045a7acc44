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


PLAIN_SAMPLES = [
    "Tool t1.",
    "  Indented one-liner.  ",
    "Summary wrapped\n    onto a second line.",
    "Summary.\n\n    A long description\n    over two lines.",
    "Summary.\n\n\n\n    After many blank lines.\n\n",
    "\n    Starts on the second line.\n\n    Then a paragraph.\n    ",
    "Convert °C to °F — exactly, with ünïcode.",
    "First paragraph.\n\n    Second paragraph.\n\n    Third paragraph.",
    "Tabs\tinside\n\tand indented by a tab.",
]

SECTIONED_SAMPLES = [
    "Do it.\n\n    Args:\n        x: The x.",
    "Do it.\n\n    :param x: The x.",
    "Do it.\n\n    @param x: The x.",
    "Do it.\n\n    Parameters\n    ----------\n    x : int\n        The x.",
    "Do it.\n\n    .. deprecated:: 1.0",
    "Do it.\n\n    >>> do_it()",
    "Ends with a colon:",
]


def test_plain_docstrings_take_the_fast_path_with_the_parsers_answer() -> None:
    from loader.tools.docstrings import _parse_sections, _plain

    for text in PLAIN_SAMPLES:
        fast = _plain(text)
        assert fast is not None, text
        assert fast == _parse_sections(text), text


def test_docstrings_that_may_have_sections_go_to_the_parser() -> None:
    from loader.tools.docstrings import _plain

    for text in SECTIONED_SAMPLES:
        assert _plain(text) is None, text
    assert parse_docstring(SECTIONED_SAMPLES[0]).params == {"x": "The x."}


def test_a_docstring_that_breaks_the_parser_is_kept_verbatim() -> None:
    # docstring_parser raises IndexError (not ParseError) on a line that is only ': ...' metadata.
    assert parse_docstring(": :meta private:") == ParsedDocstring(description=": :meta private:")
