"""The bench child's calls into Transformer Engine fit the real TE API.

No GPU here, so the TE paths of the bench child (``te_doctor/bench/child/``) never run in these
tests. What can be checked is that every call they make matches the real TE 2.20.2 wheel
(installed with ``--no-deps`` in the broken-TE venv; its import fails without cuDNN, so its
source is read with ``ast``): constructor keywords, positional parameters, recipe classes and
fields, autocast.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHILD = Path(__file__).parents[1] / "te_doctor" / "bench" / "child"


def child_sources() -> list[str]:
    """The source of every module of the bench child."""
    return [file.read_text(encoding="utf-8") for file in sorted(CHILD.glob("*.py"))]


#: TE class or function -> (file under transformer_engine/, positional parameters the child passes)
TE_CALLABLES = {
    "Linear": ("pytorch/module/linear.py", ("in_features", "out_features")),
    "LayerNormMLP": ("pytorch/module/layernorm_mlp.py", ("hidden_size", "ffn_hidden_size")),
    "TransformerLayer": (
        "pytorch/transformer.py",
        ("hidden_size", "ffn_hidden_size", "num_attention_heads"),
    ),
    "autocast": ("pytorch/quantization.py", ()),
    "fp8_autocast": ("pytorch/quantization.py", ()),
}


def parameters(file: Path, name: str) -> list[str]:
    """The parameters of function ``name`` or of class ``name``'s ``__init__``, in order."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    for node in tree.body:
        function: ast.FunctionDef | None = None
        if isinstance(node, ast.FunctionDef) and node.name == name:
            function = node
        if isinstance(node, ast.ClassDef) and node.name == name:
            function = next(
                n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"
            )
        if function is not None:
            args = function.args
            names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
            return [n for n in names if n != "self"]
    raise AssertionError(f"{name} not found in {file}")


def child_calls() -> dict[str, list[tuple[int, set[str]]]]:
    """For each TE callable: (positional count, keyword names) of every call in the child.

    ``**common`` is resolved to the keys of the dict literal assigned to ``common``.
    """
    trees = [ast.parse(source) for source in child_sources()]
    calls: dict[str, list[tuple[int, set[str]]]] = {}
    nodes = (n for tree in trees for n in ast.walk(tree))
    for function in (n for n in nodes if isinstance(n, ast.FunctionDef)):
        spreads: dict[str, set[str]] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                keys = {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        spreads[target.id] = {str(k) for k in keys}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in TE_CALLABLES:
                continue
            owner = ast.unparse(node.func.value)
            if owner not in ("te", "self.te"):
                continue
            names: set[str] = set()
            for keyword in node.keywords:
                if keyword.arg is not None:
                    names.add(keyword.arg)
                elif isinstance(keyword.value, ast.Name):
                    names |= spreads[keyword.value.id]
            calls.setdefault(node.func.attr, []).append((len(node.args), names))
    return calls


def test_the_child_calls_every_te_module_it_benchmarks() -> None:
    assert set(child_calls()) == set(TE_CALLABLES)


@pytest.mark.slow  # builds the real TE venv on a cold cache
@pytest.mark.parametrize("name", list(TE_CALLABLES))
def test_each_call_fits_the_real_signature(te_root: Path, name: str) -> None:
    file, positional = TE_CALLABLES[name]
    accepted = parameters(te_root / file, name)
    for count, keywords in child_calls()[name]:
        assert tuple(accepted[:count]) == positional[:count], (name, accepted[:count])
        assert keywords <= set(accepted), (name, keywords - set(accepted))


@pytest.mark.slow  # builds the real TE venv on a cold cache
def test_the_recipes_and_their_fields_exist(te_root: Path) -> None:
    source = (te_root / "common" / "recipe" / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    child = next(source for source in child_sources() if "PATHS = " in source)
    paths = ast.literal_eval(child.split("PATHS = ", 1)[1].split("\n}\n", 1)[0] + "\n}")
    recipes = {recipe for _, _, _, recipe in paths.values() if recipe}
    assert recipes == {
        "DelayedScaling",
        "Float8CurrentScaling",
        "Float8BlockScaling",
        "MXFP8BlockScaling",
        "NVFP4BlockScaling",
    }
    assert recipes <= set(classes)
    fields = {
        n.target.id
        for n in classes["DelayedScaling"].body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    assert {"fp8_format", "amax_history_len", "amax_compute_algo"} <= fields
    assert "HYBRID = " in (ast.get_source_segment(source, classes["Format"]) or "")


@pytest.mark.slow  # builds the real TE venv on a cold cache
def test_the_literal_options_are_ones_te_knows(te_root: Path) -> None:
    mlp = (te_root / "pytorch" / "module" / "layernorm_mlp.py").read_text(encoding="utf-8")
    assert '"gelu"' in mlp and '"swiglu"' in mlp
    constants = (te_root / "pytorch" / "constants.py").read_text(encoding="utf-8")
    assert '"no_mask"' in constants
