"""``nvidia-smi`` tables (every layout since driver 470), ``nvidia-smi -q``, ``nvidia-smi -L``,
``nvcc --version``, and nvidia-smi's ``Driver Version: X  CUDA Version: Y`` pair quoted alone.

The table header gives the driver version and the highest CUDA the driver supports (``N/A``
inside some containers: then no fact). GPU rows are recognised by their cells, not by column
positions, because the layout changed with the 530 drivers and again with 570, Windows prints
``WDDM``/``TCC`` instead of the persistence mode, and logs add prefixes. A table counts its
GPUs only when a border and then some other line follow the last GPU row, so a paste cut
between two GPUs does not under-count. nvidia-smi cuts long names (``NVIDIA GeForce ...``):
a cut name is never a ``gpu.name``, and gives a compute capability only when the visible
part settles it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from te_doctor.triage.gpus import compute_capability, is_truncated
from te_doctor.triage.parse_common import Findings, Report, source, version_or_none

SMI = "nvidia-smi"
NVCC = "nvcc"
_HEADER = re.compile(
    r"NVIDIA-SMI[ \t]{1,20}\S{1,40}[ \t]{1,60}Driver Version:[ \t]{0,20}(\S{1,40})"
    r"[ \t]{1,60}CUDA Version:[ \t]{0,20}(\S{1,20})"
)
_ROW_NAME = re.compile(
    r"[ \t]{0,8}(\d{1,3})[ \t]{1,8}(\S.{0,90}?)[ \t]{1,40}(?:On|Off|WDDM|TCC|N/A)[ \t]*"
)
_BUS_ID = re.compile(r"[ \t]*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\b")
_LIST_LINE = re.compile(r"GPU (\d{1,3}): (\S.{0,120}?) \(UUID: GPU-[0-9A-Fa-f-]{8,64}\)[ \t]*")
_NVCC = re.compile(
    r"Cuda compilation tools, release \d{1,3}\.\d{1,3}, V(\d{1,3}(?:\.\d{1,6}){1,3})"
)
_MAX_ROW = 1_000
#: ``nvidia-smi -q``: ``Driver Version                            : 560.35.05``.
_QUERY_FIELD = re.compile(
    r"[ \t]{0,8}(Driver Version|CUDA Version|Attached GPUs|Product Name)[ \t]{1,60}:"
    r"[ \t]{0,8}(\S.{0,120}?)[ \t]*"
)
#: The header's two fields quoted in a sentence: "nvidia-smi: Driver Version: 535.247.01, CUDA
#: Version: 12.2".
_HEADER_PAIR = re.compile(
    r"Driver Version:[ \t]{0,4}(\d{2,4}\.\d{1,4}(?:\.\d{1,4})?)[ \t,;|]{1,20}"
    r"CUDA Version:[ \t]{0,4}(\d{1,2}\.\d{1,2})\b"
)


@dataclass
class _Table:
    header_line: str = ""
    driver: str | None = None
    cuda: str | None = None
    names: list[str] = field(default_factory=list)
    border: bool = False  # a "+---+" border followed the last GPU row
    closed: bool = False  # ... and then a line that is not another GPU row


def parse(report: Report) -> Findings:
    """Facts from every nvidia-smi table, ``nvidia-smi -L`` listing and nvcc banner."""
    found = Findings()
    text = report.text
    if "NVIDIA-SMI" in text or "Disp.A" in text or "Persistence-M" in text:
        _tables(report, found)
        if SMI in found.formats:
            _own_table_lines(report, found)
    if "NVSMI LOG" in text or "Attached GPUs" in text:
        _query(report, found)
    elif "Driver Version:" in text and SMI not in found.formats:
        _header_pair(report, found)
    if "(UUID: GPU-" in text:
        _gpu_list(report, found)
    if "Cuda compilation tools" in text:
        for match in _NVCC.finditer(text):
            version = version_or_none(match.group(1), 2)
            if version is not None and not report.cut_at(match.end()):
                found.recognised(NVCC)
                found.add("cuda.toolkit_version", version, source(NVCC, match.group(0)))
                line = report.line_at(match.start())
                found.own(line, line + 1)
    return found


def _query(report: Report, found: Findings) -> None:
    """``nvidia-smi -q``: the driver, its CUDA, the GPU count and each GPU's product name.

    The count is ``Attached GPUs`` (a paste cut after the first GPU still states it); without
    that line the product names give the first GPU only.
    """
    fields: dict[str, str] = {}
    names: list[str] = []
    for number, line in enumerate(report.complete_lines()):
        if len(line) > _MAX_ROW or ":" not in line:
            continue
        match = _QUERY_FIELD.fullmatch(line)
        if match is None:
            continue
        key, value = match.groups()
        if key == "Product Name":
            names.append(value)
        else:
            fields.setdefault(key, value)
        found.own(number, number + 1)
    if not fields and not names:
        return
    found.recognised(SMI)
    where = source(SMI + " -q", "; ".join(f"{k}: {v}" for k, v in fields.items()))
    driver = version_or_none(fields.get("Driver Version", ""), 2)
    cuda = version_or_none(fields.get("CUDA Version", ""), 2)
    if driver is not None:
        found.add("driver.version", driver, where)
    if cuda is not None:
        found.add("driver.cuda_version", cuda, where)
    count = fields.get("Attached GPUs", "")
    if count.isdigit() and 0 < int(count) < 1000:
        found.add("gpus.count", int(count), where)
        if len(names) == int(count):
            found.add("gpus.distinct_names", len(set(names)), where)
    if names:
        name_where = source(SMI + " -q", f"Product Name: {names[0]}")
        found.add("gpu.name", names[0], name_where)
        cc = compute_capability(names[0])
        if cc is not None:
            found.add("gpu.compute_capability", cc, name_where)


def _header_pair(report: Report, found: Findings) -> None:
    """nvidia-smi's ``Driver Version: 535.247.01  CUDA Version: 12.2`` outside a table."""
    for match in _HEADER_PAIR.finditer(report.text):
        if report.cut_at(match.end()):
            continue
        driver, cuda = version_or_none(match.group(1), 2), version_or_none(match.group(2), 2)
        if driver is None or cuda is None:
            continue
        found.recognised(SMI)
        where = source(SMI, match.group(0))
        found.add("driver.version", driver, where)
        found.add("driver.cuda_version", cuda, where)


def _own_table_lines(report: Report, found: Findings) -> None:
    """Every line shaped like a row or border of an nvidia-smi table."""
    for number, line in enumerate(report.lines):
        stripped = line.strip()
        if (
            (stripped.startswith("|") and stripped.endswith("|"))
            or stripped.startswith(("+-", "+=", "|-", "|="))  # borders, the header's rule
            or "NVIDIA-SMI" in stripped
        ):
            found.own(number, number + 1)


def _tables(report: Report, found: Findings) -> None:
    table: _Table | None = None
    for number, line in enumerate(report.lines):
        if "NVIDIA-SMI" in line:
            header = _HEADER.search(line)
            if header:
                _flush(table, found)
                table = _Table(
                    header_line=line,
                    driver=version_or_none(header.group(1), 2),
                    cuda=version_or_none(header.group(2), 2),
                )
                continue
        name = _gpu_row(line)
        if name is not None:
            if table is None:
                table = _Table()
            table.names.append(name)
            table.border = table.closed = False
        elif table is not None and table.names and not table.closed:
            if table.border:
                table.closed = report.line_is_complete(number)  # a cut line may be a GPU row
            elif "+--" in line:
                table.border = True
    _flush(table, found)


def _gpu_row(line: str) -> str | None:
    """The GPU name in a table row ``|   0  NVIDIA H100 80GB HBM3   On  | 00000000:18:00.0 ...``."""
    if len(line) > _MAX_ROW or line.count("|") < 3:
        return None
    cells = line.split("|", 3)
    row = _ROW_NAME.fullmatch(cells[1])
    if row is None or not _BUS_ID.match(cells[2]):
        return None
    return row.group(2).strip()


def _flush(table: _Table | None, found: Findings) -> None:
    if table is None:
        return
    found.recognised(SMI)
    where = source(SMI, table.header_line) if table.header_line else ""
    if table.driver is not None:
        found.add("driver.version", table.driver, where)
    if table.cuda is not None:
        found.add("driver.cuda_version", table.cuda, where)
    if not table.names:
        return
    first = table.names[0]
    row_where = source(SMI, f"GPU 0: {first}")
    if not is_truncated(first):
        found.add("gpu.name", first, row_where)
    cc = compute_capability(first)
    if cc is not None:
        found.add("gpu.compute_capability", cc, row_where)
    if table.closed:
        count_where = source(SMI, f"{len(table.names)} GPU rows: " + ", ".join(table.names))
        found.add("gpus.count", len(table.names), count_where)
        if not any(is_truncated(name) for name in table.names):
            found.add("gpus.distinct_names", len(set(table.names)), count_where)


def _gpu_list(report: Report, found: Findings) -> None:
    """``nvidia-smi -L``: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`` lines, 0..n-1."""
    names: list[str] = []
    for number, line in enumerate([*report.lines, None]):
        match = _LIST_LINE.fullmatch(line.strip()) if line and len(line) < _MAX_ROW else None
        if match and int(match.group(1)) == len(names):
            names.append(match.group(2).strip())
            continue
        if names and line is not None and line.strip().startswith("MIG "):
            continue
        _flush_list(names, found, complete=line is not None and report.line_is_complete(number))
        names = [match.group(2).strip()] if match and match.group(1) == "0" else []


def _flush_list(names: list[str], found: Findings, *, complete: bool) -> None:
    """One ``-L`` listing; it is only counted when something follows it (not cut off)."""
    if not names:
        return
    found.recognised(SMI)
    where = source(SMI, f"nvidia-smi -L: GPU 0: {names[0]}")
    found.add("gpu.name", names[0], where)
    cc = compute_capability(names[0])
    if cc is not None:
        found.add("gpu.compute_capability", cc, where)
    if complete:
        found.add("gpus.count", len(names), where)
        found.add("gpus.distinct_names", len(set(names)), where)
