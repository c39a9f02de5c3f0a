"""The package tree is the pipeline: a lower stage never imports a higher one.

probes → snapshot → engine → findings → recommender → renderers, with the commands on top.
Each te_doctor package may import only the stages listed for it below (itself always); the
smoke and bench children are standalone scripts and the only code that imports torch or TE.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "te_doctor"
#: The root's shared helpers: ``errors``, ``files``, ``toml_compat``, ``background``
#: (``__init__`` and ``__main__`` are entry points and may load anything, lazily).
ROOT = "root"
BASE = {ROOT, "snapshot"}
ALLOWED: dict[str, set[str]] = {
    ROOT: set(),
    "snapshot": {ROOT},
    "probes": BASE,
    "smoke": BASE | {"probes"},
    "engine": BASE,
    "check": BASE | {"probes", "smoke", "engine"},
    "plan": BASE | {"probes", "engine", "check"},
    "triage": BASE | {"engine", "check"},
    "fleet": BASE | {"probes", "engine", "check"},
    "bench": BASE | {"probes", "smoke", "engine", "check"},
    "runtime": BASE | {"probes", "smoke", "engine", "check"},
    "render": BASE | {"engine", "check", "plan", "triage", "fleet", "bench"},
    "pytest_plugin": BASE | {"runtime"},
    "cli": BASE
    | {"probes", "smoke", "engine", "check", "plan", "triage", "fleet", "bench", "render"},
}
ENTRY_POINTS = {"__init__.py", "__main__.py"}
STANDALONE_CHILDREN = ("smoke/child", "bench/child")
MACHINE_LEARNING = ("torch", "transformer_engine", "numpy")


def stage_of(path: Path) -> str:
    """The stage a module belongs to: its package under te_doctor, or the root."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ROOT


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def stage_of_module(module: str) -> str | None:
    """The te_doctor stage a dotted module name lives in (None outside te_doctor)."""
    parts = module.split(".")
    if parts[0] != "te_doctor" or len(parts) == 1:
        return None
    if (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return ROOT if (PACKAGE / f"{parts[1]}.py").exists() else None


MODULES = sorted(
    p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).as_posix() not in ENTRY_POINTS
)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_only_lower_stages(path: Path) -> None:
    stage = stage_of(path)
    assert stage in ALLOWED, f"{stage}: a new stage; add it to ALLOWED with what it may import"
    upward = sorted(
        {
            module
            for module in imported_modules(path)
            if (target := stage_of_module(module)) not in (None, stage)
            and target not in ALLOWED[stage]
        }
    )
    assert not upward, f"{stage} imports a stage above it: {upward}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_the_children_import_torch_or_te(path: Path) -> None:
    if path.relative_to(PACKAGE).as_posix().startswith(STANDALONE_CHILDREN):
        return
    heavy = [m for m in imported_modules(path) if m.split(".")[0] in MACHINE_LEARNING]
    assert not heavy, f"imports {heavy}: only the smoke and bench children may"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_modules_stay_under_300_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 300, f"{lines} lines: split it by job"
