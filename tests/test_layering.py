"""studio.core and studio.engine import no Qt: checked in a clean interpreter and in the source."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import studio

PACKAGE_ROOT = Path(studio.__file__).resolve().parent
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "qasync")
HEADLESS = ("core", "engine")


def headless_modules() -> list[str]:
    names = []
    for layer in HEADLESS:
        for path in sorted((PACKAGE_ROOT / layer).rglob("*.py")):
            parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join(parts))
    return names


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
    offenders = []
    for layer in HEADLESS:
        for path in (PACKAGE_ROOT / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                offenders += [
                    f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] in QT_MODULES
                ]
    assert offenders == []
