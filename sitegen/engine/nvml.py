"""GPU memory and device facts from NVML (the ``nvidia-ml-py`` package, module ``pynvml``).

Everything here degrades to "no GPU" (empty lists, ``None``) when the package or the
driver is missing, so CPU machines and CI never fail on it.
"""

from __future__ import annotations

import os
from typing import Any, Final

from sitegen.engine.memory import MemoryProbe
from sitegen.records.record_models import DeviceInfo

_MIB = 2**20


class NvmlUsedProbe:
    """Device memory in use on one GPU (all processes: NVML cannot attribute memory to
    container processes reliably, so the device total is what is measured)."""

    source: Final = "nvml-used"

    def __init__(self, nvml: Any, handle: Any, device: str) -> None:
        self.device = device
        self._nvml = nvml
        self._handle = handle

    def read_mib(self) -> float:
        return self._nvml.nvmlDeviceGetMemoryInfo(self._handle).used / _MIB


def nvml_probes() -> list[MemoryProbe]:
    """One ``nvml-used`` probe per visible GPU, named ``cuda:<i>``; empty without NVML."""
    nvml = _init_nvml()
    if nvml is None:
        return []
    return [NvmlUsedProbe(nvml, handle, f"cuda:{i}") for i, handle in enumerate(_visible(nvml))]


def nvml_devices() -> tuple[list[DeviceInfo], str | None, str | None]:
    """Visible GPUs, the driver version and the interconnect; ``([], None, None)`` without NVML."""
    nvml = _init_nvml()
    if nvml is None:
        return [], None, None
    handles = _visible(nvml)
    devices = [
        DeviceInfo(
            id=f"cuda:{i}",
            name=_text(nvml.nvmlDeviceGetName(handle)),
            memory_total_mib=round(nvml.nvmlDeviceGetMemoryInfo(handle).total / _MIB, 1),
        )
        for i, handle in enumerate(handles)
    ]
    driver = _text(nvml.nvmlSystemGetDriverVersion())
    return devices, driver, _interconnect(nvml, handles) if handles else None


def nvml_cuda_version() -> str | None:
    """The CUDA version the driver provides, e.g. ``CUDA 12.4``; ``None`` without NVML."""
    nvml = _init_nvml()
    if nvml is None:
        return None
    for name in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
        try:
            version = int(getattr(nvml, name)())
        except (AttributeError, nvml.NVMLError):
            continue
        return f"CUDA {version // 1000}.{version % 1000 // 10}"
    return None


def parse_visible_devices(value: str | None) -> list[int | str] | None:
    """``CUDA_VISIBLE_DEVICES`` as CUDA reads it: indices or ``GPU-``/``MIG-`` UUIDs, up to
    the first invalid entry; ``None`` when unset (every GPU is visible)."""
    if value is None:
        return None
    selectors: list[int | str] = []
    for entry in (part.strip() for part in value.split(",")):
        if entry.isdigit():
            selectors.append(int(entry))
        elif entry.startswith(("GPU-", "MIG-")):
            selectors.append(entry)
        else:
            break
    return selectors


def _init_nvml() -> Any | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()  # reference-counted and cheap; never shut down while probes live
    except pynvml.NVMLError:
        return None
    return pynvml


def _visible(nvml: Any) -> list[Any]:
    """Handles in CUDA's numbering. NVML counts in PCI order, CUDA fastest-first: the two
    agree on hosts with identical GPUs, which is where the multi-GPU comparisons run."""
    count = nvml.nvmlDeviceGetCount()
    selectors = parse_visible_devices(os.environ.get("CUDA_VISIBLE_DEVICES"))
    if selectors is None:
        return [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    handles = []
    for selector in selectors:
        try:
            if isinstance(selector, int):
                if selector >= count:
                    break
                handles.append(nvml.nvmlDeviceGetHandleByIndex(selector))
            else:
                handles.append(nvml.nvmlDeviceGetHandleByUUID(selector))
        except nvml.NVMLError:
            break  # CUDA also ignores everything after an entry it cannot resolve
    return handles


def _interconnect(nvml: Any, handles: list[Any]) -> str:
    links = [_active_nvlinks(nvml, handle) for handle in handles]
    if any(links):
        if len(set(links)) == 1:
            return f"NVLink ({links[0]} active links per GPU)"
        per_gpu = ", ".join(f"cuda:{i} {n}" for i, n in enumerate(links))
        return f"NVLink (active links: {per_gpu})"
    try:
        generation = nvml.nvmlDeviceGetMaxPcieLinkGeneration(handles[0])
        width = nvml.nvmlDeviceGetMaxPcieLinkWidth(handles[0])
    except nvml.NVMLError:
        return "PCIe"
    # The maximum the GPU and the host agree on: the current link drops its speed when idle.
    return f"PCIe Gen{generation} x{width}"


def _active_nvlinks(nvml: Any, handle: Any) -> int:
    active = 0
    for link in range(nvml.NVML_NVLINK_MAX_LINKS):
        try:
            active += nvml.nvmlDeviceGetNvLinkState(handle, link) == nvml.NVML_FEATURE_ENABLED
        except nvml.NVMLError:
            continue  # link absent or NVLink not supported
    return active


def _text(value: str | bytes) -> str:
    """Older nvidia-ml-py releases return bytes."""
    return value.decode() if isinstance(value, bytes) else value
