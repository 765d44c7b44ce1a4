"""The package's layout: no import cycle among ``toolkit`` modules, lazy and type-checking imports included.

Every ``import`` and ``from ... import`` of a module counts, wherever it is written (at the top, inside a
function, under ``if TYPE_CHECKING``), and so does the package ``__init__`` that Python runs first
(``toolkit.explorer.history`` runs ``toolkit.explorer``).  Dependencies point one way: a displayed object
does not import its display, a widget's steps do not import the model that calls them.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "toolkit"


def module_names() -> dict[str, Path]:
    """``toolkit.x.y`` -> its file, for every module of the package (the shipped suite's steps aside)."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "suite" in parts:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    return names


def _imported(node: ast.Import | ast.ImportFrom, current: str, is_package: bool) -> list[str]:
    """The dotted names an import statement may load: modules, or module.attribute for ``from`` imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = current.split(".") if is_package else current.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the toolkit modules it imports, with the packages whose ``__init__`` runs first."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(node, name, is_package):
                while target and target not in modules:  # an attribute of a module: the module
                    target = target.rpartition(".")[0]
                parents = target.split(".")
                for depth in range(2, len(parents) + 1):  # toolkit.a.b runs toolkit.a's __init__ first
                    loaded = ".".join(parents[:depth])
                    if loaded in modules and loaded != name and not name.startswith(loaded + "."):
                        graph[name].add(loaded)
    return graph


def cycles(graph: dict[str, set[str]], nodes: list[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
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
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_among_toolkit_modules() -> None:
    modules = module_names()
    found = cycles(import_graph(modules), sorted(modules))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(component) for component in found)


@pytest.mark.parametrize(
    ("source", "cycle"),
    [
        ({"a": "from toolkit.b import x", "b": "def f():\n    from toolkit.a import y"}, ["toolkit.a", "toolkit.b"]),
        ({"a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import toolkit.b", "b": "import toolkit.a"},
         ["toolkit.a", "toolkit.b"]),
        ({"p/__init__": "from toolkit.p.n import x", "p/m": "", "q": "from toolkit.p.m import x",
          "p/n": "from toolkit.q import y"}, ["toolkit.p", "toolkit.p.n", "toolkit.q"]),
        ({"a": "from . import b", "b": "from .a import x"}, ["toolkit.a", "toolkit.b"]),
    ],
    ids=["lazy import", "type-checking import", "a package's __init__", "relative imports"],
)  # fmt: skip
def test_the_check_finds_each_kind_of_cycle(tmp_path: Path, source: dict[str, str], cycle: list[str]) -> None:
    package = tmp_path / "toolkit"
    for name, text in {"__init__": "", **source}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / f"{name}.py").write_text(text + "\n")
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(tmp_path).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert cycles(import_graph(modules), sorted(modules)) == [cycle]


# --- the simulator's wings (issue 35): web -> rules -> storage, and the runtime at the root ---------------------

SIMULATOR = "toolkit.simulator"
WINGS = ("web", "rules", "storage")
# what a wing never imports: a wing imports only downwards (web -> rules -> storage)
NEVER = {"rules": ("web",), "storage": ("rules", "web")}
MOST_FLAT = 16  # modules at the simulator's root: its runtime (server, core, scheduler, delivery, ...)


def wing_of(module: str) -> str | None:
    """The wing ``module`` belongs to (``toolkit.simulator.web.gateway`` -> ``web``), or None."""
    parts = module.split(".")
    if parts[:2] == SIMULATOR.split(".") and len(parts) > 2 and parts[2] in WINGS:
        return parts[2]
    return None


def wing_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module of a wing that the importing module's wing never imports."""
    found = []
    for module, imported in sorted(graph.items()):
        wing = wing_of(module)
        for target in sorted(imported):
            if wing is not None and wing_of(target) in NEVER.get(wing, ()):
                found.append(f"{module} imports {target}")
    return found


def test_each_wing_imports_only_downwards() -> None:
    assert wing_breaches(import_graph(module_names())) == []


def test_the_simulator_is_three_wings_and_its_runtime() -> None:
    root = PACKAGE / "simulator"
    flat = sorted(path.name for path in root.glob("*.py"))
    assert len(flat) <= MOST_FLAT, flat
    assert {path.name for path in root.iterdir() if path.is_dir() and path.name != "__pycache__"} == set(WINGS)


def test_the_wing_check_finds_an_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "toolkit" / "simulator"
    files = {"rules/engine": "from toolkit.simulator.web import render", "web/render": "",
             "storage/sqlite": "def f():\n    from toolkit.simulator.rules import engine"}  # fmt: skip
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / f"{name}.py").write_text(text + "\n")
    modules = {}
    for path in (tmp_path / "toolkit").rglob("*.py"):
        parts = path.relative_to(tmp_path).with_suffix("").parts
        modules[".".join(parts)] = path
    assert wing_breaches(import_graph(modules)) == [
        "toolkit.simulator.rules.engine imports toolkit.simulator.web.render",
        "toolkit.simulator.storage.sqlite imports toolkit.simulator.rules.engine",
    ]


# --- SQL lives in storage, written once for both databases ---------------------------------------------------

SQL_TEXT = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM|UPDATE\s+\w+\s+SET|INSERT\s+INTO|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))\b"
)
STORAGE = PACKAGE / "simulator" / "storage"
OWN_WORDS = {"sqlite.py", "postgres.py", "schema.py", "checkpoints.py"}  # each database's own statements
NOT_SHARED = re.compile(r"INSERT\s+OR\b|sqlite_|nextval|(?<![:\w]):[A-Za-z_]\w*|PRAGMA")


def not_shared(text: str) -> bool:
    """What only one database reads, or a ``?`` inside a literal (where it is no parameter)."""
    return NOT_SHARED.search(text) is not None or any("?" in literal for literal in re.findall(r"'[^']*'", text))


def sql_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in ``path`` that reads as SQL (an f-string by its written parts)."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if id(node) in parts:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if SQL_TEXT.search(text):
            found.append((node.lineno, text))
    return found


def test_no_sql_outside_storage() -> None:
    outside = [f"{path.relative_to(ROOT)}:{line}: {text[:60]}" for path in sorted(PACKAGE.rglob("*.py"))
               if STORAGE not in path.parents for line, text in sql_strings(path)]  # fmt: skip
    assert outside == []


def test_the_storage_wing_writes_each_statement_once_for_both_databases() -> None:
    """Outside each store's own module, statements use only what SQLite and PostgreSQL both read: ``?``
    parameters (never in a literal), ``ON CONFLICT DO NOTHING``, each store's next id."""
    shared = [path for path in sorted(STORAGE.glob("*.py")) if path.name not in OWN_WORDS]
    found = [f"{path.name}:{line}: {text[:70]}" for path in shared for line, text in sql_strings(path)
             if not_shared(text)]  # fmt: skip
    assert found == []
    assert any(sql_strings(path) for path in shared)  # (the check reads statements at all)


def test_the_sql_check_finds_a_statement_in_the_rules(tmp_path: Path) -> None:
    module = tmp_path / "engine.py"
    module.write_text('ROW = "SELECT * FROM transactions WHERE id=?"\nNAME = f"DELETE FROM {table} WHERE a=1"\n')
    assert [line for line, _ in sql_strings(module)] == [1, 2]
