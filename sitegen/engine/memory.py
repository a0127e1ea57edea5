"""Peak memory per device, sampled by a background thread during each request."""

from __future__ import annotations

import os
import threading
from typing import Final, Literal, Protocol

from sitegen.records.record_models import DeviceMemory

_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


class MemoryProbe(Protocol):
    """Reads the current memory of one device."""

    device: str

    @property
    def source(self) -> Literal["process-rss", "nvml-used"]:
        """``DeviceMemory.source``."""

    def read_mib(self) -> float: ...


class ProcessRssProbe:
    """Resident memory of a local process (the CPU engine's memory)."""

    source: Final = "process-rss"

    def __init__(self, pid: int, device: str = "cpu") -> None:
        self.device = device
        self.pid = pid
        self._statm = f"/proc/{pid}/statm"

    def read_mib(self) -> float:
        with open(self._statm, encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE_MIB


_TCP_LISTEN = "0A"
"""The LISTEN state in ``/proc/net/tcp``."""


def listening_pid(port: int) -> int | None:
    """The process on this host that listens on TCP ``port`` (IPv4 or IPv6), when the
    kernel lets this user see it (its own processes, or any as root); else ``None``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as lines:
                rows = [line.split() for line in lines.readlines()[1:]]
        except OSError:
            continue
        for row in rows:
            local, state, inode = row[1], row[3], row[9]
            if state == _TCP_LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    if not inodes:
        return None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            descriptors = os.scandir(f"/proc/{entry.name}/fd")
            with descriptors:
                if any(os.readlink(fd.path) in inodes for fd in descriptors):
                    return int(entry.name)
        except OSError:  # gone, or not ours to look at
            continue
    return None


class PeakMemorySampler:
    """Context manager: samples every probe each ``interval_s`` and keeps the maxima."""

    def __init__(self, probes: list[MemoryProbe], interval_s: float = 0.05) -> None:
        self.probes = probes
        self.interval_s = interval_s
        self._peaks = [0.0] * len(probes)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def _sample(self) -> None:
        for index, probe in enumerate(self.probes):
            self._peaks[index] = max(self._peaks[index], probe.read_mib())

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> PeakMemorySampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def peaks(self) -> list[DeviceMemory]:
        return [
            DeviceMemory(
                device=probe.device,
                source=probe.source,
                peak_mib=round(peak, 1),
                sample_interval_s=self.interval_s,
            )
            for probe, peak in zip(self.probes, self._peaks, strict=True)
        ]


def cpu_name() -> str | None:
    """This host's CPU model (``model name`` in ``/proc/cpuinfo``), when it says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None
