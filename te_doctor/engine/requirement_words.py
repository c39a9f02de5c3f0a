"""An unmet path requirement as one sentence in words: what it needs, and what is here.

``gpu.compute_capability >= 10.0`` on an L40S reads "needs a GPU of compute capability 10.0 or
newer (Blackwell); this NVIDIA L40S is 8.9"; ``torch.cuda_version is present`` with a CPU
build reads "needs a CUDA build of PyTorch; PyTorch 2.8.0+cpu is a CPU-only build". Conditions
stay data: the sentence comes from the leaf (fact, operator, operand), a noun for the facts
execution paths read, and the fact catalogue's description for any other fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from te_doctor.engine.applicability import no_gpu_visible
from te_doctor.engine.conditions import Leaf
from te_doctor.engine.fact_paths import FACT_TYPES, FactType
from te_doctor.engine.flatten import FlatFacts
from te_doctor.snapshot.facts import Fact, FactState

#: Facts by the thing they describe, for sentences; any other fact uses its catalogue text.
NOUNS = {
    "te.torch_extension": "Transformer Engine with its PyTorch extension",
    "te.version": "Transformer Engine",
    "packages.transformer_engine": "Transformer Engine",
    "packages.torch": "PyTorch",
    "torch.version": "PyTorch",
    "torch.cuda_version": "PyTorch built for CUDA",
    "gpu.compute_capability": "a GPU of compute capability",
    "gpus.count": "a visible NVIDIA GPU",
}
#: The architecture a compute capability floor names.
ARCHITECTURES = {"8.0": "Ampere", "8.9": "Ada", "9.0": "Hopper", "10.0": "Blackwell"}
_COMPARISONS = {
    ">=": "{} or newer",
    ">": "newer than {}",
    "<": "below {}",
    "<=": "{} or older",
    "==": "exactly {}",
    "!=": "other than {}",
}


def requirement_sentences(leaves: Sequence[Leaf], facts: FlatFacts) -> tuple[str, ...]:
    """``needs ...; <what is here>`` for each requirement that is false or undecided here.

    Requirements answered by the same fact of this machine share one sentence ("needs
    Transformer Engine with its PyTorch extension, and Transformer Engine 2.8 or newer;
    Transformer Engine is not installed"); those on the GPU itself come first, since no
    install can change them.
    """
    grouped: dict[str, list[str]] = {}
    hardware_first = sorted(leaves, key=lambda leaf: not leaf.path.startswith(("gpu.", "gpus.")))
    for leaf in hardware_first:
        fact = facts.get(leaf.path)
        if fact.state is FactState.UNKNOWN:
            found = f"te-doctor could not tell here ({fact.reason})"
        else:
            found = here(leaf.path, fact, facts)
        grouped.setdefault(found, []).append(needs(leaf))
    return tuple(
        ", and ".join([wants[0], *(w.removeprefix("needs ") for w in wants[1:])]) + f"; {found}"
        for found, wants in grouped.items()
    )


def needs(leaf: Leaf) -> str:
    """What the requirement asks for, in words."""
    path, op = leaf.path, leaf.op
    if path == "smoke.verified" and op == "contains":
        return f"needs the smoke test to have run its {leaf.operand} check and matched FP32"
    if path == "torch.cuda_version" and op == "is present":
        return "needs a CUDA build of PyTorch"
    if path == "gpus.count":
        return "needs a visible NVIDIA GPU"
    noun = NOUNS.get(path) or _catalogue_noun(path)
    if op == "is present":
        return f"needs {noun}"
    if op == "is missing":
        return f"needs no {noun}"
    if op == "satisfies":
        return f"needs {noun} {_specifier_words(str(leaf.operand))}"
    operand = leaf.ref or _operand_text(leaf)
    words = _COMPARISONS.get(op, f"{op} {{}}").format(operand)
    if path == "gpu.compute_capability" and operand in ARCHITECTURES and op in (">=", ">"):
        words += f" ({ARCHITECTURES[operand]})"
    return f"needs {noun} {words}"


def here(path: str, fact: Fact[Any], facts: FlatFacts) -> str:
    """What this machine has instead, in words."""
    if path.startswith(("gpu.", "gpus.")) and no_gpu_visible(facts):
        return "no NVIDIA GPU is visible here"
    if path.startswith("smoke."):
        outcome = facts.get("smoke.outcome")
        if not outcome.known:
            return "the smoke test did not run"
        stage = facts.get("smoke.stage").get()
        if outcome.value != "ok" and stage and stage != "gemm":
            return f"the smoke test stopped in stage {stage}, before its GEMM checks"
        return "the smoke test ran, and this check did not pass or was not among its checks"
    if fact.state is FactState.KNOWN:
        return _known(path, fact.value, facts)
    if path.startswith("te.") or path == "packages.transformer_engine":
        version = facts.get("te.version")
        if not version.known:
            return "Transformer Engine is not installed"
        return f"Transformer Engine {version.value} {_absent_te_part(path)}"
    if path.startswith("torch.") or path == "packages.torch":
        return _torch_build(facts)
    if path.startswith("packages."):
        return f"{path.removeprefix('packages.').replace('_', '-')} is not installed"
    return f"not here ({fact.reason})"


def _known(path: str, value: Any, facts: FlatFacts) -> str:
    if path == "gpu.compute_capability":
        return f"this {facts.get('gpu.name').get() or 'GPU'} is {value}"
    if path == "torch.cuda_version":
        return f"PyTorch {facts.get('torch.version').get()} is built for CUDA {value}"
    if path == "packages.transformer_engine":
        return f"this is Transformer Engine {value}"
    if path == "packages.torch":
        return f"this is PyTorch {value}"
    return f"here it is {value}"


def _absent_te_part(path: str) -> str:
    if path == "te.torch_extension":
        return "is installed without its PyTorch extension"
    return "does not have it"


def _torch_build(facts: FlatFacts) -> str:
    version = facts.get("torch.version")
    if not version.known:
        return "PyTorch is not installed"
    if facts.get("torch.hip_version").known:
        return f"PyTorch {version.value} is a ROCm (AMD) build"
    return f"PyTorch {version.value} is a CPU-only build"


def _catalogue_noun(path: str) -> str:
    spec = FACT_TYPES.get(path) or FACT_TYPES.get(path.split(".", 1)[0] + ".*")
    text = spec.doc if spec else path
    return text.split(" (")[0]


def _specifier_words(text: str) -> str:
    """``">=2.8"`` -> "2.8 or newer"; several clauses joined with "and"."""
    words = []
    for clause in (c.strip() for c in text.split(",") if c.strip()):
        op = next((o for o in (">=", "<=", "==", "!=", ">", "<", "~=") if clause.startswith(o)), "")
        version = clause[len(op) :].strip()
        words.append(_COMPARISONS.get(op, "compatible with {}").format(version))
    return " and ".join(words)


def _operand_text(leaf: Leaf) -> str:
    operand = leaf.operand
    if leaf.type is FactType.CC and isinstance(operand, tuple) and leaf.op not in ("in", "not in"):
        return ".".join(str(part) for part in operand)
    if isinstance(operand, tuple):
        return ", ".join(_operand_text_one(leaf, o) for o in operand)
    return _operand_text_one(leaf, operand)


def _operand_text_one(leaf: Leaf, operand: Any) -> str:
    if isinstance(operand, bool):
        return "true" if operand else "false"
    if leaf.type is FactType.CC and isinstance(operand, tuple):
        return ".".join(str(part) for part in operand)
    return str(getattr(operand, "pattern", operand))
