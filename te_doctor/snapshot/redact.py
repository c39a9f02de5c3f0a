"""Keep secrets out of every output, and strip personal data on request (``--redact``).

Secrets (tokens, keys, passwords) are removed always: users paste snapshots into public bug
reports. ``--redact`` additionally replaces hostname, user name, home paths and GPU serials/UUIDs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from te_doctor.snapshot.codec import from_data, to_data
from te_doctor.snapshot.model import Snapshot

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE|(^|_)KEY($|_)|APIKEY|AUTH", re.I
)
#: Well-known token formats, caught even where the variable name gives nothing away.
_SECRET_VALUE = re.compile(
    r"hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[\w-]{20,}|xox[abprs]-[\w-]{10,}|sk-[A-Za-z0-9_-]{20,}"
)
_URL_CREDENTIALS = re.compile(r"(\w+://)[^/\s:@]+:[^/\s@]+@")
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_MIN_SECRET_LENGTH = 4


def is_secret_name(name: str) -> bool:
    """True for variable names that conventionally hold credentials."""
    return bool(_SECRET_NAME.search(name))


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of secret-named variables, longest first, so they can be scrubbed anywhere."""
    values = {v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def scrub_text(text: str, secrets: tuple[str, ...]) -> str:
    """Remove known secret values, token-shaped strings and URL credentials from ``text``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    text = _SECRET_VALUE.sub(REDACTED, text)
    return _URL_CREDENTIALS.sub(rf"\1{REDACTED}@", text)


_HOME_PATH = re.compile(r"(/home/|/Users/|\\Users\\)[^/\\\s]+")


def redact_pasted_text(text: str) -> str:
    """Text printed for pasting (triage): no tokens, URL credentials, home names, GPU UUIDs."""
    text = scrub_text(text, ())
    text = _HOME_PATH.sub(lambda m: f"{m.group(1)}<user>", text)
    return _GPU_UUID.sub(lambda m: f"{m.group(1)}-{REDACTED}", text)


def scrub_secrets(snapshot: Snapshot, env: Mapping[str, str]) -> Snapshot:
    """The snapshot with every secret removed from every string in it."""
    secrets = secret_values(env)
    return _map_strings(snapshot, lambda text: scrub_text(text, secrets))


def redact_personal(snapshot: Snapshot, *, home: str = "") -> Snapshot:
    """The snapshot without hostname, user name, home paths and GPU UUIDs/serials."""
    host = snapshot.host
    names = [v for v in (host.hostname.get(), host.user.get()) if v and len(v) >= 3]
    homes = sorted({h.rstrip("/") for h in (home, f"/home/{host.user.get() or ''}") if h}, key=len)

    def strip(text: str) -> str:
        for path in reversed(homes):
            if path not in ("", "/home/"):
                text = re.sub(re.escape(path) + r"(?=/|$)", "~", text)
        text = re.sub(r"/home/[^/\s]+", "/home/<user>", text)
        for name in names:
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", REDACTED, text)
        return _GPU_UUID.sub(lambda m: f"{m.group(1)}-{REDACTED}", text)

    stripped = _map_strings(snapshot, strip)
    gpus = tuple(dataclasses.replace(gpu, serial=_blank(gpu.serial)) for gpu in stripped.gpus)
    meta = dataclasses.replace(stripped.meta, redacted=True)
    return dataclasses.replace(stripped, gpus=gpus, meta=meta)


def _blank(fact: Any) -> Any:
    return dataclasses.replace(fact, value=REDACTED) if fact.known else fact


def _map_strings(snapshot: Snapshot, change: Callable[[str], str]) -> Snapshot:
    return from_data(Snapshot, _walk(to_data(snapshot), change))


def _walk(data: Any, change: Callable[[str], str]) -> Any:
    if isinstance(data, str):
        return change(data)
    if isinstance(data, list):
        return [_walk(item, change) for item in data]
    if isinstance(data, dict):
        return {key: _walk(value, change) for key, value in data.items()}
    return data
