"""The import graph: edges both ways, replaced whole, forgotten without a trace."""

from __future__ import annotations

from loader.importing.import_graph import ImportGraph


def test_dependents_are_transitive_and_dependencies_direct() -> None:
    graph = ImportGraph()
    graph.add("middle", "base")
    graph.add("top", "middle")
    graph.add("other", "unrelated")
    assert graph.dependents(["base"]) == {"middle", "top"}
    assert graph.dependencies("top") == frozenset({"middle"})
    assert graph.dependencies("unknown") == frozenset()


def test_replacing_what_a_module_imports_keeps_the_reverse_index_in_step() -> None:
    graph = ImportGraph()
    graph.replace("tool", ["helper_a", "helper_b"])
    graph.replace("tool", ["helper_b"])
    assert graph.dependents(["helper_a"]) == set()
    assert graph.dependents(["helper_b"]) == {"tool"}
    graph.replace("tool", ())
    assert graph.imports_of("tool") == frozenset()  # known, imports nothing
    graph.replace("tool", None)
    assert graph.imports_of("tool") is None  # forgotten
    assert graph.dependents(["helper_b"]) == set()


def test_a_cycle_is_walked_once() -> None:
    graph = ImportGraph()
    graph.add("a", "b")
    graph.add("b", "a")
    assert graph.dependents(["a"]) == {"a", "b"}
