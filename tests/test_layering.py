"""The layers' import rules, read from the source (every import, also those inside functions or
under ``TYPE_CHECKING``):

- studio.core and studio.engine import no Qt (also checked in a clean interpreter);
- studio.core imports neither studio.engine nor studio.ui;
- studio.engine imports no studio.ui;
- the contract packages (each package under studio/core with a ``contract.py``, and each package
  studio/core/registry.py imports a contract from) do not import each other, except those a
  package names in ``BUILDS_ON`` in its ``__init__.py``, and never in a cycle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import studio

PACKAGE_ROOT = Path(studio.__file__).resolve().parent
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "qasync")
HEADLESS = ("core", "engine")
CORE = PACKAGE_ROOT / "core"
REGISTRY = CORE / "registry.py"


@dataclass(frozen=True)
class Import:
    """One import statement: the modules it may load, most general first, and ``file:line``."""

    importer: str
    targets: tuple[str, ...]
    where: str


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_in(source: str, module: str, *, is_package: bool, where: str = "") -> list[Import]:
    """Every import in ``source``, with absolute targets. ``from a import b`` may load ``a`` and
    ``a.b`` (``b`` may be a submodule); relative imports are resolved against ``module``; an
    ``importlib.import_module`` or ``__import__`` of a constant name counts as an import."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                origin = f"{base}.{origin}" if origin else base
            targets = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and _names_an_import_function(node.func):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                targets = [first.value]
        if targets:
            found.append(Import(module, tuple(targets), f"{where}:{node.lineno}"))
    return found


def _names_an_import_function(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def imports_of(layer: Path) -> list[Import]:
    found: list[Import] = []
    for path in sorted(layer.rglob("*.py")):
        found += imports_in(
            path.read_text(encoding="utf-8"),
            module_name(path),
            is_package=path.name == "__init__.py",
            where=str(path.relative_to(PACKAGE_ROOT.parent)),
        )
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def contract_packages() -> set[str]:
    """Packages under studio/core with a contract.py beside their __init__.py, and those the
    registry imports from."""
    found = {
        module_name(path.parent)
        for path in CORE.glob("*/contract.py")
        if (path.parent / "__init__.py").exists()
    }
    subpackages = {module_name(p.parent) for p in CORE.glob("*/__init__.py")}
    if REGISTRY.exists():
        source = REGISTRY.read_text(encoding="utf-8")
        for imp in imports_in(source, "studio.core.registry", is_package=False):
            found |= {p for p in subpackages for t in imp.targets if within(t, p)}
    return found


def violations(imports: list[Import], forbidden: set[str]) -> list[str]:
    """``file:line importer -> imported`` for each import of a forbidden module; an import
    names the most general module it loads that is forbidden."""
    found = []
    for imp in imports:
        hit = next((t for t in imp.targets if any(within(t, f) for f in forbidden)), None)
        if hit is not None:
            found.append(f"{imp.where} {imp.importer} -> {hit}")
    return sorted(found)


def assert_none(found: list[str]) -> None:
    assert not found, "imports across a layer boundary:\n" + "\n".join(found)


def headless_modules() -> list[str]:
    return [
        module_name(path)
        for layer in HEADLESS
        for path in sorted((PACKAGE_ROOT / layer).rglob("*.py"))
    ]


# ---- the rules ----------------------------------------------------------------------------------


def test_importing_every_headless_module_loads_no_qt():
    modules = headless_modules()
    assert "studio.core.pre_llm.config" in modules
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{QT_MODULES!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_no_headless_source_names_a_qt_module():
    imports = imports_of(PACKAGE_ROOT / "core") + imports_of(PACKAGE_ROOT / "engine")
    assert_none(violations(imports, set(QT_MODULES)))


def test_core_imports_neither_engine_nor_ui():
    assert_none(violations(imports_of(CORE), {"studio.engine", "studio.ui"}))


def test_engine_imports_no_ui():
    assert_none(violations(imports_of(PACKAGE_ROOT / "engine"), {"studio.ui"}))


def test_the_contract_packages_are_found():
    found = contract_packages()
    assert {"studio.core.pre_llm", "studio.core.step", "studio.core.chain"} <= found
    assert "studio.core.invocation" in found


def builds_on(package: str) -> set[str]:
    """The contract packages ``package`` declares it builds on (``BUILDS_ON`` in its
    ``__init__.py``, a tuple of module names)."""
    init = CORE / package.rpartition(".")[2] / "__init__.py"
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "BUILDS_ON" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


@pytest.mark.parametrize("package", sorted(contract_packages()))
def test_a_contract_package_imports_no_other_contract_package(package: str):
    others = contract_packages() - {package} - builds_on(package)
    assert_none(violations(imports_of(CORE / package.rpartition(".")[2]), others))


@pytest.mark.parametrize("package", sorted(contract_packages()))
def test_a_contract_builds_only_on_contracts_that_do_not_build_on_it(package: str):
    declared = builds_on(package)
    assert declared <= contract_packages() - {package}
    assert all(package not in builds_on(other) for other in declared)


# ---- the import reader itself -----------------------------------------------------------------


def targets(source: str, module: str = "studio.core.pre_llm.request", package: bool = False):
    return {t for imp in imports_in(source, module, is_package=package) for t in imp.targets}


def test_imports_inside_functions_and_type_checking_blocks_are_read():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from studio.ui.main_window import MainWindow\n"
        "def later():\n"
        "    import studio.engine.runner\n"
    )
    assert {"studio.ui.main_window", "studio.engine.runner"} <= targets(source)


def test_from_a_package_import_a_module_names_the_module():
    assert "studio.core.step" in targets("from studio.core import step\n")


def test_relative_imports_are_resolved():
    assert "studio.core.step.baseline" in targets("from ..step import baseline\n")
    assert "studio.core.pre_llm.diff" in targets("from .diff import diff_request\n")
    assert "studio.core.pre_llm.diff" in targets(
        "from .diff import x\n", "studio.core.pre_llm", package=True
    )


def test_a_violation_names_the_file_line_and_both_modules():
    imports = imports_in(
        "import json\n\ndef f():\n    from ..step.baseline import parse_baseline\n",
        "studio.core.pre_llm.request",
        is_package=False,
        where="studio/core/pre_llm/request.py",
    )
    assert violations(imports, {"studio.core.step"}) == [
        "studio/core/pre_llm/request.py:4 studio.core.pre_llm.request -> studio.core.step.baseline"
    ]


def test_a_module_imported_by_name_is_read():
    source = (
        "import importlib\nimportlib.import_module('studio.ui.app')\n__import__('studio.engine')\n"
    )
    assert {"studio.ui.app", "studio.engine"} <= targets(source)


def test_allowed_imports_are_no_violations():
    imports = imports_in(
        "import json\nfrom studio.core import findings\nfrom .targets import Rows\n",
        "studio.core.pre_llm.config",
        is_package=False,
    )
    assert violations(imports, {"studio.core.step", "studio.engine", "studio.ui"}) == []
