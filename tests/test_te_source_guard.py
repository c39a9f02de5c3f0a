"""A guard for the next TE release: the real TE 2.20.2 wheel's Python source, read with ``ast``.

Two ways TE has silently outgrown te-doctor's rules (rule-audit FG2, §5): a module-level import
of a torch module newer than the torch floor te-doctor states for that TE (TE 2.10 began importing
``torch.distributed.fsdp._fully_shard``, which only torch 2.6 has, while its own assert still says
2.1), and a recipe class or ``check_*_support`` function that no rule or path knows about. When
either test fails, read the new TE code, then update the rules (TED422, the paths) and the tables.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from packaging.version import Version

from te_doctor.engine.paths import load_paths
from te_doctor.engine.rules import builtin_rules_dir, load_rules

#: torch modules TE 2.20.2 imports at module level, and the first torch release that has each.
TORCH_MODULE_SINCE = {
    "torch": "1.0",
    "torch._C": "1.0",
    "torch._prims_common": "2.0",
    "torch.autograd.graph": "1.13",
    "torch.cuda": "1.0",
    "torch.distributed": "1.0",
    "torch.distributed._tensor": "2.0",
    "torch.distributed.fsdp": "1.11",
    "torch.distributed.fsdp._common_utils": "2.0",
    "torch.distributed.fsdp._fully_shard._fsdp_common": "2.6",  # pytorch PR#141868
    "torch.distributed.fsdp._traversal_utils": "2.0",
    "torch.distributed.tensor": "2.5",  # pytorch PR#133881
    "torch.fx.experimental.symbolic_shapes": "2.0",
    "torch.nn": "1.0",
    "torch.nn.functional": "1.0",
    "torch.nn.parameter": "1.0",
    "torch.ops": "1.0",
    "torch.optim.optimizer": "1.0",
    "torch.utils._pytree": "1.13",
    "torch.utils.checkpoint": "1.0",
}
#: Recipe classes no rule needs to name, and why.
RECIPES_WITHOUT_RULES = {
    "CustomRecipe": "user-supplied quantizer factories: no hardware requirement of TE's own",
}


def module_level_torch_imports(root: Path) -> dict[str, list[str]]:
    """torch module -> the TE files that import it at module level (not inside functions)."""
    found: dict[str, list[str]] = {}
    for file in sorted((root / "pytorch").rglob("*.py")):
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name == "torch" or name.startswith("torch."):
                    found.setdefault(name, []).append(str(file.relative_to(root)))
    return found


def stated_torch_floor() -> Version:
    """The torch floor TED422 states for the newest TE (its ``torch.version <`` leaf)."""
    rule = next(r for r in load_rules() if r.id == "TED422")
    leaf = next(leaf for leaf in rule.when.all if leaf.path == "torch.version" and leaf.op == "<")
    return Version(Version(str(leaf.operand)).base_version)  # "2.6.dev0" -> 2.6


@pytest.mark.slow  # builds the real TE venv on a cold cache
def test_every_module_level_torch_import_is_known_and_within_the_floor(te_root: Path) -> None:
    imports = module_level_torch_imports(te_root)
    unknown = {m: files for m, files in imports.items() if m not in TORCH_MODULE_SINCE}
    assert not unknown, f"TE imports torch modules te-doctor has not checked: {unknown}"
    floor = stated_torch_floor()
    too_new = {m: TORCH_MODULE_SINCE[m] for m in imports if Version(TORCH_MODULE_SINCE[m]) > floor}
    assert not too_new, f"needs a torch newer than TED422's floor {floor}: {too_new}"
    assert Version(max((TORCH_MODULE_SINCE[m] for m in imports), key=Version)) >= Version("2.6")


@pytest.mark.slow  # builds the real TE venv on a cold cache
def test_every_recipe_and_support_check_is_known_to_a_rule_or_path(te_root: Path) -> None:
    rule_text = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(builtin_rules_dir().rglob("*.toml"))
    )
    titles = " ".join(p.title for p in load_paths())
    recipes = [
        node.name
        for node in ast.parse((te_root / "common/recipe/__init__.py").read_text("utf-8")).body
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "Recipe" for b in node.bases)
    ]
    checks = re.findall(
        r"^def (check_\w+_support)\(",
        (te_root / "pytorch/quantization.py").read_text(encoding="utf-8"),
        flags=re.M,
    )
    assert len(recipes) >= 5 and len(checks) >= 4
    unknown = [
        name
        for name in recipes + checks
        if name not in rule_text and name not in titles and name not in RECIPES_WITHOUT_RULES
    ]
    assert not unknown, f"TE has recipes or support checks no rule or path mentions: {unknown}"
