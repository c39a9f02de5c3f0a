"""Which report area a rule's finding belongs to: the component it is about.

The report has one line per component (GPU, NVIDIA driver, CUDA, cuDNN, PyTorch, Transformer
Engine, flash-attn, platform and environment, smoke test), and each finding sits under the
component it is about, so "no GPU visible" is under GPU and "driver not answering" under the
driver. The area is decided, first rule that answers:

1. a category that names a component (``driver-too-old``, ``cudnn``, ``unsupported-gpu-fp8``,
   ``torch-version``, ``flash-attn``) gives that component;
2. otherwise the first fact the rule's summary names (``{te.version}`` -> Transformer Engine),
   since the summary is the sentence the user reads;
3. otherwise the first fact the condition reads that is not a presence guard (``x is
   present``);
4. otherwise the category's usual component (``missing-lib`` -> Transformer Engine ...), or
   the smoke test for a rule of no component's category that reads only what it showed.

Smoke facts (``smoke.*``) are evidence, not a subject: steps 2 and 3 pass over them, so
"importing TE failed in the smoke test" is a Transformer Engine finding.
"""

from __future__ import annotations

import re

from te_doctor.engine.rule_model import Rule

GPU = "GPU"
DRIVER = "NVIDIA driver"
CUDA = "CUDA"
CUDNN = "cuDNN"
TORCH = "PyTorch"
TE = "Transformer Engine"
FLASH_ATTN = "flash-attn"
PLATFORM = "Platform"
SMOKE = "Smoke test"
#: The areas in print order.
AREAS = (GPU, DRIVER, CUDA, CUDNN, TORCH, TE, FLASH_ATTN, PLATFORM, SMOKE)

_COMPONENT_CATEGORIES = {
    "unsupported-gpu-fp8": GPU,
    "driver-too-old": DRIVER,
    "cudnn": CUDNN,
    "torch-version": TORCH,
    "flash-attn": FLASH_ATTN,
}
_USUAL = {
    "cuda-mismatch": CUDA,
    "install-build": TE,
    "import-abi": TE,
    "missing-lib": TE,
    "multiple-installs": TE,
    "runtime-numerics": SMOKE,
    "shape-alignment": SMOKE,
    "config": PLATFORM,
    "other": PLATFORM,
}
#: Fact path prefixes and their areas, most specific first.
_FACT_AREAS = (
    ("driver.visible_", GPU),
    ("gpu.", GPU),
    ("gpus.", GPU),
    ("driver.", DRIVER),
    ("cuda.", CUDA),
    ("cudnn.", CUDNN),
    ("torch.", TORCH),
    ("packages.torch", TORCH),
    ("te.", TE),
    ("packages.transformer_engine", TE),
    ("plan.", TE),
    ("packages.flash_attn", FLASH_ATTN),
    ("smoke.", SMOKE),
)
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*\.[A-Za-z0-9_.]+)\}")


def area_of(rule: Rule) -> str:
    """The area whose line the rule's finding is listed under."""
    if rule.category in _COMPONENT_CATEGORIES:
        return _COMPONENT_CATEGORIES[rule.category]
    named = [p for p in _PLACEHOLDER.findall(rule.summary) if not p.startswith("smoke.")]
    if named:
        return fact_area(named[0])
    read = [leaf.path for leaf in rule.when.leaves() if leaf.op != "is present"]
    subjects = [path for path in read if not path.startswith("smoke.")]
    if subjects:
        return fact_area(subjects[0])
    if rule.category in ("config", "other") and read:
        return SMOKE
    return _USUAL.get(rule.category, PLATFORM)


def fact_area(path: str) -> str:
    """The area a fact path describes (host, environment, other packages: the platform)."""
    return next((area for prefix, area in _FACT_AREAS if path.startswith(prefix)), PLATFORM)
