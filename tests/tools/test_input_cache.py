"""Reusing input models: equal keys only for signatures that build the same model."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from datetime import date
from enum import Enum
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, Field

from loader.tools.function_tool import FunctionTool
from loader.tools.input_cache import LruCache, signature_key
from loader.tools.schema import InputModel, build_input_model, resolve_type_hints


def key_of(func: Callable[..., Any], doc: dict[str, str] | None = None) -> object:
    params = list(inspect.signature(func).parameters.values())
    return signature_key(params, resolve_type_hints(func.__name__, func, params), doc or {})


class Color(Enum):
    RED = "red"


class Point(BaseModel):
    x: int


def built(func: Callable[..., Any], doc: dict[str, str] | None = None) -> InputModel:
    params = list(inspect.signature(func).parameters.values())
    hints = resolve_type_hints(func.__name__, func, params)
    return build_input_model(func.__name__, params, hints, doc or {})


def test_same_signature_same_key_whatever_the_function() -> None:
    def first(a: int, b: str = "x") -> str:
        return ""

    def second(a: int, b: str = "x") -> int:
        return 0

    def other_default(a: int, b: str = "y") -> str:
        return ""

    assert key_of(first) == (("a", int, ("required",), None), ("b", str, (str, "x"), None))
    assert key_of(first) == key_of(second)
    assert key_of(other_default) != key_of(first)
    assert built(first).model is built(second).model  # built once, reused
    assert built(other_default).model is not built(first).model
    assert built(other_default).model.model_validate({"a": 1}).model_dump() == {"a": 1, "b": "y"}


def test_no_parameters_is_cacheable() -> None:
    def f() -> None: ...

    assert key_of(f) == ()


def pair_keys(left: Callable[..., Any], right: Callable[..., Any]) -> tuple[object, object]:
    return key_of(left), key_of(right)


def test_defaults_differing_only_in_type_or_sign_get_different_keys() -> None:
    def int_one(x: int = 1) -> None: ...
    def bool_one(x: int = True) -> None: ...
    def zero(x: float = 0.0) -> None: ...
    def minus_zero(x: float = -0.0) -> None: ...
    def required(x: int) -> None: ...
    def none(x: int | None = None) -> None: ...

    keys = [key_of(f) for f in (int_one, bool_one, zero, minus_zero, required, none)]
    assert None not in keys
    assert len(set(keys)) == len(keys)


def test_annotations_equal_to_typing_but_ordered_differently_get_different_keys() -> None:
    def ab(x: Literal["a", "b"]) -> None: ...
    def ba(x: Literal["b", "a"]) -> None: ...
    def int_str(x: Union[int, str]) -> None: ...  # noqa: UP007 - the typing form is the point
    def str_int(x: Union[str, int]) -> None: ...  # noqa: UP007
    def optional(x: Optional[int]) -> None: ...  # noqa: UP045
    def pipe(x: int | None) -> None: ...
    def lit_true(x: Literal[True]) -> None: ...
    def lit_one(x: Literal[1]) -> None: ...

    for left, right in ((ab, ba), (int_str, str_int), (optional, pipe), (lit_true, lit_one)):
        first, second = pair_keys(left, right)
        assert isinstance(first, tuple) and isinstance(second, tuple), (left.__name__, right.__name__)
        assert first != second, (left.__name__, right.__name__)
        assert built(left).model is built(left).model  # cacheable: built once, reused


def test_descriptions_are_part_of_the_key() -> None:
    def one(x: Annotated[int, "first"]) -> None: ...
    def two(x: Annotated[int, "second"]) -> None: ...
    def plain(x: int) -> None: ...

    assert key_of(one) != key_of(two)
    assert key_of(plain, {"x": "doc one"}) != key_of(plain, {"x": "doc two"})
    assert key_of(plain, {"x": "doc one"}) != key_of(plain)


def test_parameter_names_and_order_are_part_of_the_key() -> None:
    def ab(a: int, b: int) -> None: ...
    def ba(b: int, a: int) -> None: ...
    def ac(a: int, c: int) -> None: ...

    assert len({key_of(ab), key_of(ba), key_of(ac)}) == 3


def test_what_the_key_cannot_pin_down_is_not_cached() -> None:
    def model(p: Point) -> None: ...
    def enum(c: Color) -> None: ...
    def enum_default(c: str = Color.RED.value, d: Any = Color.RED) -> None: ...
    def field(x: Annotated[int, Field(ge=1)]) -> None: ...
    def field_default(x: int = Field(default=1, ge=0)) -> None: ...
    def list_default(x: list[int] = [1]) -> None: ...  # noqa: B006
    def nested(x: dict[str, list[Point]]) -> None: ...

    for func in (model, enum, enum_default, field, field_default, list_default, nested):
        assert key_of(func) is None, func.__name__


def test_standard_library_types_and_containers_are_cached() -> None:
    def f(a: list[int], b: dict[str, float], c: tuple[int, ...], d: date, e: Any = None) -> None: ...
    def g(a: list[int], b: dict[str, float], c: tuple[int, ...], d: date, e: Any = None) -> None: ...
    def ints(a: list[int], b: dict[str, int], c: tuple[int, ...], d: date, e: Any = None) -> None: ...

    assert key_of(f) == key_of(g) != key_of(ints)
    model = built(f).model
    assert built(g).model is model
    assert built(ints).model is not model
    value = model.model_validate({"a": [1], "b": {"x": 0.5}, "c": [1, 2], "d": "2024-01-02"})
    assert value.model_dump() == {"a": [1], "b": {"x": 0.5}, "c": (1, 2), "d": date(2024, 1, 2), "e": None}


def test_tools_sharing_a_signature_keep_their_own_specs_and_validation() -> None:
    def add(a: int, b: int = 2) -> str:
        """Add.

        Args:
            a: The first.
        """
        return str(a + b)

    def mul(a: int, b: int = 2) -> str:
        """Multiply.

        Args:
            a: The first.
        """
        return str(a * b)

    first, second = FunctionTool(add), FunctionTool(mul)
    first_spec, second_spec = first.tool_spec, second.tool_spec
    assert first_spec["inputSchema"] == second_spec["inputSchema"]
    assert (first_spec["name"], second_spec["name"]) == ("add", "mul")
    first_spec["inputSchema"]["json"]["properties"].clear()
    assert FunctionTool(add).tool_spec["inputSchema"] == second.tool_spec["inputSchema"]
    assert second.tool_spec["inputSchema"] == {
        "json": {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first."},
                "b": {"type": "integer", "default": 2, "description": "Parameter b"},
            },
            "required": ["a"],
        }
    }
    assert first.invoke({"a": 3}, tool_use_id="t")["content"] == [{"text": "5"}]
    assert second.invoke({"a": 3}, tool_use_id="t")["content"] == [{"text": "6"}]
    assert second.invoke({"a": "x"}, tool_use_id="t")["status"] == "error"


def test_lru_cache_forgets_the_least_recently_used() -> None:
    cache: LruCache[str, int] = LruCache(maxsize=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_lru_cache_is_safe_across_threads() -> None:
    cache: LruCache[int, int] = LruCache(maxsize=8)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(2000):
                cache.put((i + offset) % 16, i)
                cache.get(i % 16)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 8
