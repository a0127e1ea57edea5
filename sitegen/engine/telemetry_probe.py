"""What a device did during a request: GPU counters sampled from NVML by a background
thread (utilization, power, energy, clock, temperature, memory), or the CPU time of the
engine process on CPU runs, summarized into ``DeviceTelemetry`` records.

Like ``sitegen.engine.nvml``, everything degrades to "no GPU" without NVML: no probes, an
empty sampler, and counters a device does not support read as ``None``.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, Literal, Protocol

from sitegen.engine.nvml import _init_nvml, _visible
from sitegen.records.record_models import DeviceTelemetry

_MIB = 2**20


@dataclasses.dataclass(frozen=True)
class TelemetrySample:
    """One reading of one GPU's counters; a counter the device does not support is ``None``."""

    t_s: float
    """Monotonic seconds when the reading was taken."""
    device: str
    """``cuda:<index>`` in CUDA numbering."""
    sm_util_pct: float | None
    mem_bw_util_pct: float | None
    power_w: float | None
    sm_clock_mhz: float | None
    temperature_c: float | None
    memory_used_mib: float | None
    energy_mj: int | None
    """The device's total energy counter (mJ since the driver loaded)."""


class TelemetryProbe(Protocol):
    """Reads the counters of one device."""

    device: str

    def read(self, now: float) -> TelemetrySample: ...


class NvmlTelemetryProbe:
    """The counters of one GPU through NVML (``pynvml`` or a stand-in with its API)."""

    def __init__(self, nvml: Any, handle: Any, device: str) -> None:
        self.device = device
        self._nvml = nvml
        self._handle = handle

    def read(self, now: float) -> TelemetrySample:
        """Every counter once; ``now`` is the sample's time (the caller's clock)."""
        nvml, handle = self._nvml, self._handle
        utilization = self._supported(nvml.nvmlDeviceGetUtilizationRates, handle)
        power_mw = self._supported(nvml.nvmlDeviceGetPowerUsage, handle)
        memory = self._supported(nvml.nvmlDeviceGetMemoryInfo, handle)
        return TelemetrySample(
            t_s=now,
            device=self.device,
            sm_util_pct=None if utilization is None else float(utilization.gpu),
            mem_bw_util_pct=None if utilization is None else float(utilization.memory),
            power_w=None if power_mw is None else power_mw / 1000,
            sm_clock_mhz=self._supported(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM),
            temperature_c=self._supported(
                nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU
            ),
            memory_used_mib=None if memory is None else memory.used / _MIB,
            energy_mj=self._supported(nvml.nvmlDeviceGetTotalEnergyConsumption, handle),
        )

    def _supported(self, query: Callable[..., Any], *args: Any) -> Any | None:
        """``query(*args)``, or ``None`` where the device does not support it (consumer
        GPUs and older drivers lack some counters; that is not a failed measurement)."""
        try:
            return query(*args)
        except self._nvml.NVMLError:
            return None


def nvml_telemetry_probes() -> list[NvmlTelemetryProbe]:
    """One probe per visible GPU, named ``cuda:<i>``; empty without NVML."""
    nvml = _init_nvml()
    if nvml is None:
        return []
    return [
        NvmlTelemetryProbe(nvml, handle, f"cuda:{i}") for i, handle in enumerate(_visible(nvml))
    ]


def summarize_device(
    samples: list[TelemetrySample], device: str, interval_s: float
) -> DeviceTelemetry:
    """The ``nvml`` summary of one device's samples (in the order taken). Missing
    readings are ignored; a counter with no readings at all is ``None``."""

    def values(field: str) -> list[float]:
        return [value for sample in samples if (value := getattr(sample, field)) is not None]

    sm_util, mem_bw_util = values("sm_util_pct"), values("mem_bw_util_pct")
    power, sm_clock = values("power_w"), values("sm_clock_mhz")
    temperature, memory_used = values("temperature_c"), values("memory_used_mib")
    energy_j, energy_source = _energy(samples)
    return DeviceTelemetry(
        device=device,
        source="nvml",
        sample_interval_s=interval_s,
        samples=len(samples),
        duration_s=round(samples[-1].t_s - samples[0].t_s, 3) if samples else 0.0,
        sm_util_mean_pct=_rounded(statistics.fmean, sm_util, 1),
        sm_util_max_pct=_rounded(max, sm_util, 1),
        mem_bw_util_mean_pct=_rounded(statistics.fmean, mem_bw_util, 1),
        mem_bw_util_max_pct=_rounded(max, mem_bw_util, 1),
        power_mean_w=_rounded(statistics.fmean, power, 1),
        power_max_w=_rounded(max, power, 1),
        energy_j=None if energy_j is None else round(energy_j, 3),
        energy_source=energy_source,
        sm_clock_median_mhz=_rounded(statistics.median, sm_clock, 1),
        temperature_max_c=_rounded(max, temperature, 1),
        memory_used_max_mib=_rounded(max, memory_used, 1),
    )


def _rounded(
    statistic: Callable[[list[float]], float], values: list[float], digits: int
) -> float | None:
    return round(statistic(values), digits) if values else None


def _energy(
    samples: list[TelemetrySample],
) -> tuple[float | None, Literal["counter", "integrated-power"] | None]:
    """Joules over the samples and how they were obtained. The counter is exact where
    both ends read it; it going backwards means a driver reload, so power is integrated."""
    if samples:
        first, last = samples[0].energy_mj, samples[-1].energy_mj
        if first is not None and last is not None and last >= first:
            return (last - first) / 1000, "counter"
    powered = [(sample.t_s, sample.power_w) for sample in samples if sample.power_w is not None]
    if len(powered) < 2:
        return None, None
    joules = sum(
        (t_next - t) * (power + power_next) / 2
        for (t, power), (t_next, power_next) in pairwise(powered)
    )
    return joules, "integrated-power"


class TelemetrySampler:
    """Context manager: samples every probe on enter, each ``interval_s`` in a daemon
    thread, and on exit; then summarizes each device."""

    def __init__(
        self,
        probes: Sequence[TelemetryProbe],
        interval_s: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.probes = probes
        self.interval_s = interval_s
        self._clock = clock
        self._samples: list[TelemetrySample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="telemetry-sampler", daemon=True)

    def _sample(self) -> None:
        for probe in self.probes:
            # Each probe's own time: reading a GPU takes milliseconds, which the
            # power integration should not misattribute to the next device.
            self._samples.append(probe.read(self._clock()))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> TelemetrySampler:
        self._sample()
        if self.probes:  # nothing to sample on a machine without GPUs
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._sample()

    def summaries(self) -> list[DeviceTelemetry]:
        """One ``nvml`` summary per probe, in the probes' order."""
        return [
            summarize_device(
                [sample for sample in self._samples if sample.device == probe.device],
                probe.device,
                self.interval_s,
            )
            for probe in self.probes
        ]

    def raw_samples(self) -> list[dict[str, Any]]:
        """Every sample in the order taken, JSON-ready, ``t_s`` from the first sample."""
        if not self._samples:
            return []
        origin = self._samples[0].t_s
        return [
            dataclasses.asdict(sample) | {"t_s": round(sample.t_s - origin, 6)}
            for sample in self._samples
        ]


class ProcessCpuTime:
    """Context manager: user + system CPU seconds a process used between enter and exit
    (this process by default, e.g. an in-process engine; else a local engine server's pid)."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid
        self._started: tuple[float, float] | None = None  # (wall, cpu) at enter
        self._ended: tuple[float, float] | None = None

    def _read_cpu_s(self) -> float:
        if self.pid is None:
            times = os.times()
            return times.user + times.system
        with open(f"/proc/{self.pid}/stat", encoding="ascii") as stat:
            # The command name (field 2) may hold spaces: count fields after its ")".
            fields = stat.read().rpartition(")")[2].split()
        utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
        return (utime + stime) / os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> ProcessCpuTime:
        self._started = (time.monotonic(), self._read_cpu_s())
        return self

    def __exit__(self, *exc: object) -> None:
        self._ended = (time.monotonic(), self._read_cpu_s())

    def summary(self) -> DeviceTelemetry:
        """The ``process-cpu-time`` summary; only after the context has exited."""
        if self._started is None or self._ended is None:
            raise RuntimeError("ProcessCpuTime.summary() needs a completed `with` block")
        (wall_start, cpu_start), (wall_end, cpu_end) = self._started, self._ended
        return DeviceTelemetry(
            device="cpu",
            source="process-cpu-time",
            sample_interval_s=None,
            samples=0,
            duration_s=round(wall_end - wall_start, 3),
            cpu_time_s=round(cpu_end - cpu_start, 3),
        )
