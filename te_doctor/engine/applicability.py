"""Whether a rule that did not fire was checked and passed, or does not apply here.

A rule whose condition is false has one of two outcomes:

- **passed**: the condition is false on facts that exist here, and would stay false whatever
  the things that are not here turned out to be. TED102 (FP8 needs 8.9) on an H100 passed.
- **not applicable**: the condition is false only because something it reads is not here:
  a fact that is absent (Transformer Engine not installed, a CPU-only torch has no CUDA
  version, a variable unset, the smoke test not run), or any GPU fact on a machine with no
  visible GPU (``gpus.count`` is 0 there, or absent without a driver). TED102 on a
  laptop without a GPU, or TED301 (cuDNN for TE) without TE, is not applicable.

The test is Kleene logic again: evaluate the condition with every leaf that reads such a
missing thing set to UNKNOWN. Still FALSE: passed. Otherwise its falsity rested on the
absence: not applicable. That holds for ``is present``/``is missing``/``is unknown`` leaves too:
were the missing thing there, any of them could come out either way.
"""

from __future__ import annotations

from te_doctor.engine.conditions import Condition, Leaf, Truth
from te_doctor.engine.flatten import FlatFacts
from te_doctor.snapshot.facts import FactState

_GPU_FAMILIES = ("gpu.", "gpus.")


def not_here(condition: Condition, facts: FlatFacts) -> tuple[tuple[str, str], ...]:
    """For a false condition: the missing things (path, why) its falsity rests on.

    Empty when it stays false with every missing thing it reads unknown (it passed).
    """
    no_gpu = no_gpu_visible(facts)
    read: dict[str, str] = {}

    def truth_of(leaf: Leaf) -> Truth:
        missing = _missing(leaf, facts, no_gpu)
        if missing:
            read.update(missing)
            return Truth.UNKNOWN
        return leaf.evaluate(facts)[0]

    if condition.combine(truth_of) is Truth.FALSE:
        return ()
    return tuple(read.items())


def no_gpu_visible(facts: FlatFacts) -> bool:
    """No GPU is visible: the count is 0, or absent (no driver to ask)."""
    count = facts.get("gpus.count")
    return count.state is FactState.ABSENT or count.value == 0


def _missing(leaf: Leaf, facts: FlatFacts, no_gpu: bool) -> dict[str, str]:
    """The paths this leaf reads that are not here, each with why."""
    found = {}
    for path in (leaf.path, leaf.ref):
        if not path:
            continue
        fact = facts.get(path)
        if no_gpu and path.startswith(_GPU_FAMILIES):
            found[path] = fact.reason or "no NVIDIA GPU is visible"
        elif fact.state is FactState.ABSENT:
            found[path] = fact.reason
    return found
