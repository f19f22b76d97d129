"""ragmeter's modules do not import each other in a cycle (docs/architecture.md, convention 14).

The import graph is read statically with :mod:`ast` from ``src/ragmeter``: every ``import`` and
``from ... import`` statement counts, at module level and inside functions and methods alike (an
import deferred into a function is still a dependency, and deferring one is not how a cycle is
broken), except those under ``if TYPE_CHECKING:``, which never run. ``from package import name``
is an edge to the submodule ``package.name`` when that is a module, else to ``package``. An
import of a module does not count as an import of its parent packages (every submodule of a
package whose ``__init__`` imports it would otherwise be in a cycle with it).

A cycle is a strongly connected component of that graph. ``KNOWN_CYCLES`` names the cycles that
are allowed while someone is breaking them: each may only shrink (a component must lie inside one
entry), and ``test_every_known_cycle_is_still_there`` fails the change that breaks a cycle until
it deletes its entry. (There is none today.)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "ragmeter"

#: Cycles being broken elsewhere (issue 20, section 3): name -> the modules of the cycle.
#: Delete an entry when its cycle is gone (test_every_known_cycle_is_still_there says when).
KNOWN_CYCLES: Mapping[str, frozenset[str]] = {}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree``, at any depth, except the body of ``if TYPE_CHECKING:``
    (its ``else:`` branch runs, so it counts)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, node.module] if node.module else package)


def import_graph() -> dict[str, set[str]]:
    """Module -> the ragmeter modules it imports (see the module docstring)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _base(name, path, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(component: frozenset[str], graph: Mapping[str, set[str]]) -> str:
    edges = sorted(f"{a} -> {b}" for a in component for b in graph[a] if b in component)
    return "{" + ", ".join(sorted(component)) + "}: " + "; ".join(edges)


def test_the_graph_sees_function_level_imports_and_skips_type_checking_ones() -> None:
    graph = import_graph()
    # ragmeter.testing imports the run store inside a function only, and Result at module level
    assert "ragmeter.log.store" in graph["ragmeter.testing"]
    assert "ragmeter.run.result" in graph["ragmeter.testing"]
    # compare_html imports Comparison and Result under TYPE_CHECKING only
    assert "ragmeter.report.comparison" not in graph["ragmeter.report.compare_html"]
    assert "ragmeter.run.result" not in graph["ragmeter.report.compare_html"]
    # a cycle made of a function-level import is found
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def test_no_import_cycle_among_ragmeter_modules() -> None:
    graph = import_graph()
    unexpected = [
        _describe(c, graph) for c in cycles(graph) if not any(c <= known for known in KNOWN_CYCLES.values())
    ]
    assert not unexpected, "import cycles (put the shared piece where both modules can import it):\n" + (
        "\n".join(unexpected)
    )


def test_every_known_cycle_is_still_there() -> None:
    """A cycle that is broken must leave KNOWN_CYCLES in the change that breaks it."""
    graph = import_graph()
    found = cycles(graph)
    gone = [name for name, modules in KNOWN_CYCLES.items() if not any(modules <= c for c in found)]
    assert not gone, f"no longer a cycle, delete from KNOWN_CYCLES: {', '.join(gone)}"
