"""The text report's end: the execution paths with their reasons, and what to use."""

from __future__ import annotations

from te_doctor.check.report import Report
from te_doctor.engine.recommend import PathVerdict
from te_doctor.render.style import Style
from te_doctor.render.wrap import hang, visible_length


def paths_lines(report: Report, style: Style) -> list[str]:
    """Viable paths, and why each better path is ruled out (every path with --verbose).

    Consecutive paths ruled out for the same reasons share them; each reason is a line.
    """
    lines: list[str] = []
    group: list[PathVerdict] = []
    better = True
    for verdict in report.recommendation.ranking:
        better = better and verdict.id != report.recommendation.path
        shown = not verdict.viable and (better or style.verbose)
        if group and (not shown or verdict.reasons != group[0].reasons):
            lines += _ruled_out(group, style)
            group = []
        if verdict.viable:
            note = f" ({'; '.join(verdict.reasons)})" if verdict.reasons else ""
            lines += hang(
                f"  {style.mark('ok')} {verdict.id}: ", verdict.title + note, style.width, 6
            )
        elif shown:
            group.append(verdict)
    if group:
        lines += _ruled_out(group, style)
    return lines


def _ruled_out(group: list[PathVerdict], style: Style) -> list[str]:
    ids = ", ".join(v.id for v in group)
    reasons = list(group[0].reasons) or ["could not decide: facts are missing"]
    head = f"  {style.mark('error')} {ids}: "
    narrow = style.width is not None and visible_length(head) > style.width // 2
    if (len(reasons) == 1 or not style.verbose) and not narrow:
        more = f" (+{len(reasons) - 1} more with --verbose)" if len(reasons) > 1 else ""
        return hang(head, reasons[0] + more, style.width, 6)
    if not style.verbose:
        more = f" (+{len(reasons) - 1} more with --verbose)" if len(reasons) > 1 else ""
        reasons = [reasons[0] + more]
    lines = [head.rstrip()]
    for reason in reasons:
        lines += hang("      ", reason, style.width)
    return lines


def recommendation_lines(report: Report, style: Style) -> list[str]:
    """The last thing a user reads: what to use, how sure we are, and what to paste."""
    chosen = report.recommendation
    if not chosen.path:
        closest = next((v for v in chosen.ranking if v.id == chosen.closest), None)
        tail = f"; closest: {closest.id}, which {'; '.join(closest.reasons)}" if closest else ""
        return [
            style.paint(line, "error")
            for line in hang("Use: ", f"nothing runs here yet{tail}", style.width, 4)
        ]
    if chosen.verification == "verified":
        proof = f"Verified here: {chosen.evidence}."
    else:
        proof = "Predicted from the rules (the smoke test did not run or did not cover this path)."
    head = hang("Use: ", f"{chosen.path}: {chosen.title}. {proof}", style.width, 4)
    lines = [style.paint(line, "ok") for line in head]
    lines += [f"    {line}" for line in chosen.snippet.splitlines()]
    lines += [f"    export {name}={value}" for name, value in chosen.env.items()]
    return lines + _measured(report)


def _measured(report: Report) -> list[str]:
    """The last bench result for this machine, when there is one."""
    measured = report.measured
    if measured is None:
        return []
    when = f"te-doctor bench, {measured.created_at}, {measured.workload}"
    lines = [f"Measured here ({when}): {measured.verdict}"]
    if measured.speedup is not None:
        lines.append(
            f"    {measured.path}: {measured.speedup:.3g}x the speed of {measured.baseline} "
            f"({measured.component})"
        )
    return [*lines, f"    details: te-doctor bench --load {measured.file}"]
