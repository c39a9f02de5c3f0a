"""Stand-in for nvidia-ml-py in the fault matrix (tests/test_faults.py): put this directory on
PYTHONPATH and name a scenario in TE_DOCTOR_TEST_NVML. It loads the real ``pynvml`` (its error
classes and constants, so te-doctor meets exactly what the bindings raise) and replaces the calls
the NVIDIA probe makes:

te-doctor imports the bindings only once ``libnvidia-ml.so.1`` loads, so on a machine without a
driver the scenarios that need one get an empty stand-in library on ``LD_LIBRARY_PATH``
(``Machine.nvml`` in tests/faults.py); ``missing`` needs none.

``missing``   nvmlInit raises NVML_ERROR_LIBRARY_NOT_FOUND (no driver installed)
``hang``      nvmlInit blocks for ten minutes (a wedged driver)
``mismatch``  nvmlInit raises NVML_ERROR_LIB_RM_VERSION_MISMATCH (driver upgraded, no reboot)
``gpu-lost``  two H100s; GPU 1 fell off the bus: NVML_ERROR_GPU_IS_LOST for its handle (Xid 79)
"""

import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from typing import NoReturn

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "pynvml", [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
)
assert _spec is not None and _spec.loader is not None, "the real nvidia-ml-py is not installed"
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})

SCENARIO = os.environ.get("TE_DOCTOR_TEST_NVML", "missing")
_LOST = 1


class _Gpu:
    def __init__(self, index: int) -> None:
        self.index = index


def _raise(code: int) -> NoReturn:
    raise _real.NVMLError(code)


def nvmlInit() -> None:  # noqa: N802 - the bindings' names
    if SCENARIO == "hang":
        time.sleep(600)
    if SCENARIO == "missing":
        _raise(_real.NVML_ERROR_LIBRARY_NOT_FOUND)
    if SCENARIO == "mismatch":
        _raise(_real.NVML_ERROR_LIB_RM_VERSION_MISMATCH)


def nvmlShutdown() -> None:  # noqa: N802
    return None


def nvmlSystemGetDriverVersion() -> str:  # noqa: N802
    return "550.54.15"


def nvmlSystemGetCudaDriverVersion() -> int:  # noqa: N802
    return 12040


def nvmlDeviceGetCount() -> int:  # noqa: N802
    return 2


def nvmlDeviceGetHandleByIndex(index: int) -> _Gpu:  # noqa: N802
    if index == _LOST:  # NVML cannot even hand out a handle for a GPU that fell off the bus
        _raise(_real.NVML_ERROR_GPU_IS_LOST)
    return _Gpu(index)


def _query(value: object) -> Callable[[_Gpu], object]:
    def call(gpu: _Gpu) -> object:
        if gpu.index == _LOST:
            _raise(_real.NVML_ERROR_GPU_IS_LOST)
        return value

    return call


class _Memory:
    total = 81559 * 2**20


class _Pci:
    busId = "00000000:18:00.0"  # noqa: N815


nvmlDeviceGetName = _query("NVIDIA H100 80GB HBM3")  # noqa: N816
nvmlDeviceGetUUID = _query("GPU-5d2b1c3e-8f0a-4b6c-9d7e-112233445566")  # noqa: N816
nvmlDeviceGetCudaComputeCapability = _query((9, 0))  # noqa: N816
nvmlDeviceGetMemoryInfo = _query(_Memory())  # noqa: N816
nvmlDeviceGetMigMode = _query((0, 0))  # noqa: N816
nvmlDeviceGetPersistenceMode = _query(1)  # noqa: N816
nvmlDeviceGetPciInfo = _query(_Pci())  # noqa: N816
nvmlDeviceGetSerial = _query("1654922001234")  # noqa: N816
