"""The words a skipped test shows: which paths do not run here, and why, cause first."""

from __future__ import annotations

import re
from collections.abc import Sequence


def skip_reason(require: str | None, skipped: Sequence[tuple[str, str]]) -> str:
    """``te-doctor: fp8 does not run here: No NVIDIA GPU ... (TED101) (te-mxfp8, torch-fp8)``.

    ``skipped`` is ``NoViablePathError.skipped``: (path id, why) for every path of the family;
    paths ruled out for the same reason share it, and a lone path is not repeated.
    """
    what = require or "no execution path"
    verb = "does not run here" if require else "runs here"
    by_reason: dict[str, list[str]] = {}
    for path_id, why in skipped:  # "a.; b." (reasons joined by choose) -> "a; b"
        by_reason.setdefault(re.sub(r"\.(?=;|$)", "", why.strip()), []).append(path_id)
    causes = "; ".join(
        why if ids == [require] else f"{why} ({', '.join(ids)})" for why, ids in by_reason.items()
    )
    return f"te-doctor: {what} {verb}: {causes or 'no path of it is known'}"
