"""The layers contract (#28): it runs in `make test` (`lint-imports`); here, that its list of arrows still
running back up is empty, and that the package has no import circle between its modules (read from the
code's own ``import`` statements with ``ast``, lazy imports inside functions included)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "streaming_dq"
#: Arrows the contract may ignore: none is left (12 before the redesign, 8 when the contract came).
IGNORED_IMPORTS_BUDGET = 0


def test_the_layers_contracts_ignore_no_arrow() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"}
    assert set(contracts) == {"layers", "sink"}  # the package's floors, and the sink's inside (#43)
    for contract in contracts.values():
        assert len(contract["ignore_imports"]) <= IGNORED_IMPORTS_BUDGET, contract["name"]
    # every module of the sink has its floor: a new one is placed on purpose, not left out of the contract
    placed = {m.strip() for layer in contracts["sink"]["layers"] for m in layer.split("|")}
    present = {p.stem for p in (PACKAGE / "sink").glob("*.py") if p.stem != "__init__"}
    present |= {p.name for p in (PACKAGE / "sink").iterdir() if (p / "__init__.py").is_file()}
    assert present == placed, (present - placed, placed - present)


#: A package file over this many lines usually holds more than one job (#43: "each file about 400 lines").
MAX_FILE_LINES = 420


def test_no_package_file_is_over_420_lines() -> None:
    sizes = {
        str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_FILE_LINES} == {}


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports (``from a.b import c`` counts ``a.b.c`` when it is a module)."""
    found: set[str] = set()
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != here}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_between_modules() -> None:
    """A package's ``__init__`` that re-exports its own modules is not a circle of design (the catalog's
    ``checks/__init__`` imports every family, which registers itself); every other circle is counted."""
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {_module(f) for f in files}
    graph = {_module(f): _imports(f, modules) for f in files}
    for name in graph:  # a package importing its own submodules, to re-export them
        graph[name] = {m for m in graph[name] if not m.startswith(f"{name}.")}
    circles = _cycles(graph)
    assert circles == []  # 4 before the redesign


def test_the_checkout_s_jar_folder_is_found_from_the_runtime_package() -> None:
    """``make jars`` fills ``.jars`` at the checkout's root; the JVM module finds it from where it lives."""
    from streaming_dq.runtime.jvm import CHECKOUT_JARS

    assert CHECKOUT_JARS == REPO / ".jars"


def _literal_values(node: ast.expr) -> tuple[str, ...] | None:
    """The values of ``Literal["a", "b"]`` (None for any other expression)."""
    if not (
        isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"
    ):
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return tuple(sorted(str(i.value) for i in items if isinstance(i, ast.Constant)))


def test_every_mode_is_declared_once() -> None:
    """A set of mode values is spelled as a ``Literal`` in one place; the others import its name."""
    seen: dict[tuple[str, ...], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            annotation = None
            if isinstance(node, ast.Assign):
                annotation = node.value
            elif isinstance(node, ast.AnnAssign | ast.arg):
                annotation = node.annotation
            if annotation is None:
                continue
            for sub in ast.walk(annotation):
                values = _literal_values(sub) if isinstance(sub, ast.expr) else None
                if values and len(values) > 1:
                    seen.setdefault(values, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    twice = {values: places for values, places in seen.items() if len(places) > 1}
    assert twice == {}
