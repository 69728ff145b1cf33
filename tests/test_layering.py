"""The code's layers: `pipeline` -> `config` -> `matcher`, no module imports itself back; within
`pipeline`, each folder imports only the folders below it; and the folders that promise no Beam
reach none."""
from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("matcher", "config", "pipeline")
# What each package may import from the project: dependencies run one way only.
ALLOWED = {"matcher": {"matcher"}, "config": {"config", "matcher"}, "pipeline": {"pipeline", "config", "matcher"}}
# What each folder of `pipeline` may import from the others: the command line uses everything;
# the local speed-ups wrap the graph; the graph never knows of them, of the command line or of the
# report; the report reads the run folder's tables; the columnar audit calls `matcher` and makes
# Arrow tables of the record schema; the tables and the evidence stand alone.
PIPELINE_FOLDERS = {
    "pipeline.cli": {"pipeline.cli", "pipeline.local", "pipeline.graph", "pipeline.report", "pipeline.tables", "pipeline.evidence"},
    "pipeline.local": {"pipeline.local", "pipeline.graph", "pipeline.tables"},
    "pipeline.graph": {"pipeline.graph", "pipeline.columnar", "pipeline.tables", "pipeline.evidence"},
    "pipeline.report": {"pipeline.report", "pipeline.tables", "pipeline.evidence"},
    "pipeline.columnar": {"pipeline.columnar", "pipeline.tables"},
    "pipeline.tables": {"pipeline.tables"},
    "pipeline.evidence": {"pipeline.evidence"},
}
# Packages that promise plain Python: no Beam, whether imported directly or through the project.
WITHOUT_BEAM = ("matcher", "config", "pipeline.report", "pipeline.tables", "pipeline.evidence", "pipeline.columnar")
# The one way out: a table on remote storage (gs://, s3://) is read through Beam's filesystems,
# imported inside the function that reads a URL and nowhere else.
REMOTE_READ = ("pipeline.evidence.confined", "read_location", "apache_beam.io.filesystems")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    """Every module of the project's packages, subpackages included."""
    return {_module_name(path): path for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """The syntax tree of `path`, parsed once for every test that reads it (never changed)."""
    return ast.parse(path.read_text("utf-8"))


def _imported_names(path: Path) -> set[str]:
    """Every module name `path` imports, at module level or inside functions alike."""
    return _names_in(_parsed(path))


def _names_in(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _imports(path: Path, known: set[str]) -> set[str]:
    """Project modules `path` imports, packages (their `__init__`) aside."""
    return {name for name in _imported_names(path) if name in known and name not in PACKAGE_INITS}


MODULES = _modules()
PACKAGE_INITS = {name for name, path in MODULES.items() if path.name == "__init__.py"}
GRAPH = {name: _imports(path, set(MODULES)) for name, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_dependencies_run_one_way(module):
    package = module.split(".")[0]
    wrong = sorted(name for name in GRAPH[module] if name.split(".")[0] not in ALLOWED[package])
    assert not wrong, f"{module} imports {wrong}"


def test_no_import_cycle():
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            pytest.fail("import cycle: " + " -> ".join(path[path.index(module):] + (module,)))
        if module in done:
            return
        for imported in sorted(GRAPH[module]):
            visit(imported, path + (module,))
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, ())


def _folder(module: str) -> str:
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("pipeline.")))
def test_each_pipeline_folder_imports_only_the_folders_below_it(module):
    allowed = PIPELINE_FOLDERS[_folder(module)]
    wrong = sorted(name for name in GRAPH[module] if name.startswith("pipeline.") and _folder(name) not in allowed)
    assert not wrong, f"{module} imports {wrong}"


def test_every_pipeline_module_lives_in_a_folder_of_its_role():
    loose = sorted(m for m in MODULES if m.startswith("pipeline.") and _folder(m) not in PIPELINE_FOLDERS)
    assert not loose, f"pipeline modules outside the folders: {loose}"


def test_the_subpackages_are_seen():
    assert "pipeline.evidence.resolvers" in GRAPH
    assert "pipeline.evidence.captures" in GRAPH["pipeline.evidence.wayback"]


@pytest.mark.slow
def test_the_command_line_answers_without_loading_beam():
    """`check`, `lint`, `history` and the parser itself never wait for Beam's import."""
    code = "import sys, pipeline.cli.main; sys.exit('apache_beam' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith(WITHOUT_BEAM)))
def test_plain_modules_reach_no_beam(module):
    """Directly or through any project module it imports, however deep."""
    seen, chain = {module: (module,)}, [module]
    while chain:
        current = chain.pop()
        beam = sorted(n for n in _beam_imports(current) if n.split(".")[0] == "apache_beam")
        assert not beam, f"{' -> '.join(seen[current])} imports {beam}"
        for imported in GRAPH[current] - set(seen):
            seen[imported] = seen[current] + (imported,)
            chain.append(imported)


def _beam_imports(module: str) -> set[str]:
    """The Beam modules `module` imports, but for the lazy remote read."""
    body = _parsed(MODULES[module]).body
    owner, function, allowed = REMOTE_READ
    if module == owner:
        reader = next(node for node in body if isinstance(node, ast.FunctionDef) and node.name == function)
        body = [node for node in body if node is not reader]
        lazy = {n for n in _names_in(reader) if n.split(".")[0] == "apache_beam"}
        assert lazy <= {allowed, f"{allowed}.FileSystems"}, lazy
    return {n for n in _names_in(ast.Module(body=body, type_ignores=[])) if n.split(".")[0] == "apache_beam"}


def test_tests_never_import_the_benchmarks():
    stems = {path.stem for path in (REPO / "bench").glob("*.py")}
    benchmarks = stems | {f"bench.{stem}" for stem in stems} | {"bench"}
    for path in sorted((REPO / "tests").rglob("*.py")):
        imported = _imports(path, benchmarks)
        assert not imported, f"{path.name} imports {sorted(imported)} from bench/"


def _declared_all(path: Path) -> list[str] | None:
    for node in _parsed(path).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [element.value for element in node.value.elts]
    return None


PUBLIC = {name: names for name, path in _modules().items() if (names := _declared_all(path)) is not None}


@functools.cache
def _uses_in(path: Path) -> dict[str, set[str]]:
    """Module -> the names of it that `path` imports, or reads as `module.name` after
    `from package import module`; one walk of the file answers for every module."""
    tree = _parsed(path)
    used: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}  # local name -> the module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            used.setdefault(node.module, set()).update(alias.name for alias in node.names)
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.setdefault(aliases[node.value.id], set()).add(node.attr)
    return used


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_all_names_what_the_module_defines(module):
    imported = importlib.import_module(module)
    assert [name for name in PUBLIC[module] if not hasattr(imported, name)] == []


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_other_modules_use_only_what_all_declares(module):
    """A module's `__all__` is its interface: the other modules and the benchmarks keep to it."""
    outside = [path for name, path in _modules().items() if name != module and not name.startswith(f"{module}.")]
    outside += sorted((REPO / "bench").glob("*.py"))
    stray = sorted(
        f"{path.relative_to(REPO)}: {name}"
        for path in outside
        for name in _uses_in(path).get(module, set()) - set(PUBLIC[module])
    )
    assert not stray, f"{module} is used beyond its __all__"
