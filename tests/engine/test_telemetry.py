"""Device telemetry: NVML readings against a scripted stand-in ``pynvml``, the summary
maths on hand-made samples, the sampler with an injected clock, and process CPU time."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from sitegen.engine.telemetry_probe import (
    NvmlTelemetryProbe,
    ProcessCpuTime,
    TelemetrySample,
    TelemetrySampler,
    nvml_telemetry_probes,
    summarize_device,
)

MIB = 2**20


class FakeNVMLError(Exception):
    pass


UNSUPPORTED = FakeNVMLError("Not Supported")


class ScriptedNvml:
    """The NVML calls telemetry makes; each answers the next value of its script for the
    handle, raising the ones that are ``FakeNVMLError`` (an unsupported counter)."""

    NVMLError = FakeNVMLError
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, scripts: dict[str, dict[str, list]]) -> None:
        self._scripts = {
            handle: {k: list(v) for k, v in s.items()} for handle, s in scripts.items()
        }

    def _next(self, handle: str, counter: str):
        value = self._scripts[handle][counter].pop(0)
        if isinstance(value, FakeNVMLError):
            raise value
        return value

    def nvmlDeviceGetUtilizationRates(self, handle):
        gpu, memory = self._next(handle, "utilization")
        return SimpleNamespace(gpu=gpu, memory=memory)

    def nvmlDeviceGetPowerUsage(self, handle):
        return self._next(handle, "power_mw")

    def nvmlDeviceGetClockInfo(self, handle, clock_type):
        clocks = self._next(handle, "clocks")
        return clocks[clock_type]  # a wrong clock type answers the memory clock, or fails

    def nvmlDeviceGetTemperature(self, handle, sensor):
        assert sensor == self.NVML_TEMPERATURE_GPU
        return self._next(handle, "temperature")

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(used=self._next(handle, "used_bytes"), total=80 * 1024 * MIB)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        return self._next(handle, "energy_mj")


def script(
    utilization: list,
    power_mw: list,
    sm_mhz: list,
    temperature: list,
    used_mib: list,
    energy_mj: list,
) -> dict[str, list]:
    """One handle's script: SM clocks (the memory clock is 9999) and memory in MiB."""
    return {
        "utilization": utilization,
        "power_mw": power_mw,
        "clocks": [{1: mhz, 2: 9999} for mhz in sm_mhz],
        "temperature": temperature,
        "used_bytes": [mib * MIB for mib in used_mib],
        "energy_mj": energy_mj,
    }


class StepClock:
    """Monotonic seconds that advance by ``step`` each time they are read."""

    def __init__(self, start: float = 100.0, step: float = 1.0) -> None:
        self._now = start - step
        self._step = step
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            self._now += self._step
            return self._now


def sample(t_s: float, **counters) -> TelemetrySample:
    """A ``cuda:0`` reading with the given counters; the others unsupported (``None``)."""
    fields = dict.fromkeys(
        (
            "sm_util_pct",
            "mem_bw_util_pct",
            "power_w",
            "sm_clock_mhz",
            "temperature_c",
            "memory_used_mib",
            "energy_mj",
        )
    )
    return TelemetrySample(t_s=t_s, device="cuda:0", **(fields | counters))


def test_probe_reads_every_counter_in_record_units():
    nvml = ScriptedNvml({"gpu0": script([(87, 41)], [251_500], [1980], [66], [2048], [1_000_000])})
    reading = NvmlTelemetryProbe(nvml, "gpu0", "cuda:0").read(12.5)
    assert reading == TelemetrySample(
        t_s=12.5,
        device="cuda:0",
        sm_util_pct=87.0,
        mem_bw_util_pct=41.0,
        power_w=251.5,
        sm_clock_mhz=1980,
        temperature_c=66,
        memory_used_mib=2048.0,
        energy_mj=1_000_000,
    )


def test_unsupported_counters_read_as_none():
    nvml = ScriptedNvml(
        {
            "gpu0": {
                "utilization": [UNSUPPORTED],
                "power_mw": [UNSUPPORTED],
                "clocks": [UNSUPPORTED],
                "temperature": [UNSUPPORTED],
                "used_bytes": [UNSUPPORTED],
                "energy_mj": [UNSUPPORTED],
            }
        }
    )
    reading = NvmlTelemetryProbe(nvml, "gpu0", "cuda:3").read(1.0)
    assert reading == dataclasses.replace(sample(1.0), device="cuda:3")


def test_summary_means_maxes_median_and_counter_energy():
    samples = [
        sample(10.0, sm_util_pct=50.0, mem_bw_util_pct=20.0, power_w=100.0, sm_clock_mhz=1500,
               temperature_c=60, memory_used_mib=1000.0, energy_mj=1_000_000),
        sample(10.5, sm_util_pct=None, mem_bw_util_pct=40.0, power_w=200.0, sm_clock_mhz=1900,
               temperature_c=71, memory_used_mib=3000.0, energy_mj=None),
        sample(11.0, sm_util_pct=100.0, mem_bw_util_pct=60.0, power_w=None, sm_clock_mhz=1800,
               temperature_c=65, memory_used_mib=2000.0, energy_mj=1_200_000),
        sample(12.0, sm_util_pct=90.0, mem_bw_util_pct=0.0, power_w=150.0, sm_clock_mhz=1980,
               temperature_c=None, memory_used_mib=None, energy_mj=1_500_000),
    ]  # fmt: skip
    summary = summarize_device(samples, "cuda:0", 0.5)
    assert summary.model_dump() == {
        "device": "cuda:0",
        "source": "nvml",
        "sample_interval_s": 0.5,
        "samples": 4,
        "duration_s": 2.0,
        "sm_util_mean_pct": 80.0,  # (50 + 100 + 90) / 3: the missing reading is skipped
        "sm_util_max_pct": 100.0,
        "mem_bw_util_mean_pct": 30.0,
        "mem_bw_util_max_pct": 60.0,
        "power_mean_w": 150.0,
        "power_max_w": 200.0,
        "energy_j": 500.0,  # 1,500,000 mJ − 1,000,000 mJ
        "energy_source": "counter",
        "sm_clock_median_mhz": 1850.0,  # between 1800 and 1900
        "temperature_max_c": 71.0,
        "memory_used_max_mib": 3000.0,
        "cpu_time_s": None,
    }


def test_summary_rounds_to_record_precision():
    samples = [
        sample(0.0, sm_util_pct=10.0, power_w=100.0),
        sample(1.0, sm_util_pct=10.0, power_w=100.0),
        sample(1.1234, sm_util_pct=11.0, power_w=100.1234),
    ]
    summary = summarize_device(samples, "cuda:0", 0.1)
    assert summary.sm_util_mean_pct == 10.3  # 10.333…
    assert summary.power_max_w == 100.1
    assert summary.duration_s == 1.123
    assert summary.energy_j == 112.348  # 100 + 0.1234 × 100.0617 = 112.3476…


def test_energy_integrates_power_when_the_counter_is_unsupported():
    samples = [sample(5.0, power_w=100.0), sample(7.0, power_w=300.0)]
    summary = summarize_device(samples, "cuda:0", 0.1)
    assert (summary.energy_j, summary.energy_source) == (400.0, "integrated-power")


def test_energy_integrates_power_when_the_counter_goes_backwards():
    samples = [
        sample(0.0, power_w=100.0, energy_mj=5_000_000),
        sample(1.0, power_w=200.0, energy_mj=6_000_000),
        sample(3.0, power_w=100.0, energy_mj=20_000),  # driver reloaded: counter restarted
    ]
    summary = summarize_device(samples, "cuda:0", 0.1)
    assert (summary.energy_j, summary.energy_source) == (450.0, "integrated-power")


def test_energy_needs_the_counter_at_both_ends():
    samples = [
        sample(0.0, power_w=100.0, energy_mj=None),
        sample(1.0, power_w=100.0, energy_mj=1_000_000),
        sample(2.0, power_w=100.0, energy_mj=9_000_000),
    ]
    summary = summarize_device(samples, "cuda:0", 0.1)
    assert (summary.energy_j, summary.energy_source) == (200.0, "integrated-power")


def test_no_energy_from_a_single_power_sample():
    summary = summarize_device([sample(0.0, power_w=100.0)], "cuda:0", 0.1)
    assert (summary.energy_j, summary.energy_source) == (None, None)
    assert (summary.samples, summary.duration_s, summary.power_mean_w) == (1, 0.0, 100.0)


def test_no_samples_summarize_to_nothing():
    summary = summarize_device([], "cuda:1", 0.1)
    assert summary.model_dump(exclude_none=True) == {
        "device": "cuda:1",
        "source": "nvml",
        "sample_interval_s": 0.1,
        "samples": 0,
        "duration_s": 0.0,
    }


def two_gpu_nvml() -> ScriptedNvml:
    return ScriptedNvml(
        {
            "gpu0": script(
                [(40, 10), (80, 30)],
                [100_000, 300_000],
                [1400, 1600],
                [50, 55],
                [512, 1024],
                [UNSUPPORTED, UNSUPPORTED],
            ),
            "gpu1": script(
                [(0, 0), UNSUPPORTED],
                [60_000, 60_000],
                [210, 210],
                [30, 31],
                [100, 100],
                [7_000_000, 7_090_000],
            ),
        }
    )


def test_sampler_reads_every_probe_on_enter_and_exit():
    nvml = two_gpu_nvml()
    probes = [
        NvmlTelemetryProbe(nvml, "gpu0", "cuda:0"),
        NvmlTelemetryProbe(nvml, "gpu1", "cuda:1"),
    ]
    # An hour's interval: the thread never samples, so exactly two readings per device.
    with TelemetrySampler(probes, interval_s=3600, clock=StepClock(start=100.0)) as sampler:
        pass
    cuda0, cuda1 = sampler.summaries()
    # cuda:0 read at 100 s and 102 s; 100 W → 300 W over 2 s
    assert (cuda0.device, cuda0.samples, cuda0.duration_s) == ("cuda:0", 2, 2.0)
    assert (cuda0.energy_j, cuda0.energy_source) == (400.0, "integrated-power")
    assert (cuda0.sm_util_mean_pct, cuda0.mem_bw_util_max_pct) == (60.0, 30.0)
    assert (cuda0.sm_clock_median_mhz, cuda0.temperature_max_c) == (1500.0, 55.0)
    assert cuda0.memory_used_max_mib == 1024.0
    assert cuda0.sample_interval_s == 3600
    # cuda:1 read at 101 s and 103 s; utilization unsupported on the second reading
    assert (cuda1.device, cuda1.samples, cuda1.duration_s) == ("cuda:1", 2, 2.0)
    assert (cuda1.energy_j, cuda1.energy_source) == (90.0, "counter")
    assert (cuda1.sm_util_mean_pct, cuda1.sm_util_max_pct) == (0.0, 0.0)
    assert cuda1.power_mean_w == 60.0


def test_raw_samples_are_json_ready_and_relative_to_the_first():
    nvml = two_gpu_nvml()
    probes = [
        NvmlTelemetryProbe(nvml, "gpu0", "cuda:0"),
        NvmlTelemetryProbe(nvml, "gpu1", "cuda:1"),
    ]
    with TelemetrySampler(
        probes, interval_s=3600, clock=StepClock(start=100.0, step=0.1)
    ) as sampler:
        pass
    raw = sampler.raw_samples()
    assert [(row["device"], row["t_s"]) for row in raw] == [
        ("cuda:0", 0.0),
        ("cuda:1", 0.1),
        ("cuda:0", 0.2),
        ("cuda:1", 0.3),
    ]
    assert raw[3] == {
        "t_s": 0.3,
        "device": "cuda:1",
        "sm_util_pct": None,
        "mem_bw_util_pct": None,
        "power_w": 60.0,
        "sm_clock_mhz": 210,
        "temperature_c": 31,
        "memory_used_mib": 100.0,
        "energy_mj": 7_090_000,
    }


class CountingProbe:
    """Readings with only a counter of reads as SM utilization; ``ready`` is set once
    the background thread has read ``wanted`` times after the first (enter) reading."""

    def __init__(self, wanted: int) -> None:
        self.device = "cuda:0"
        self.reads = 0
        self.ready = threading.Event()
        self._wanted = wanted

    def read(self, now: float) -> TelemetrySample:
        self.reads += 1
        if self.reads > self._wanted:
            self.ready.set()
        return sample(now, sm_util_pct=float(self.reads))


def test_sampler_thread_samples_each_interval_until_exit():
    probe = CountingProbe(wanted=3)
    with TelemetrySampler([probe], interval_s=0.001, clock=StepClock(start=0.0)) as sampler:
        assert probe.ready.wait(timeout=10)
    raw = sampler.raw_samples()
    reads = probe.reads
    time.sleep(0.02)
    assert probe.reads == reads  # the thread stopped with the context
    assert reads >= 5  # enter, at least three from the thread, exit
    assert [row["t_s"] for row in raw] == [float(i) for i in range(reads)]
    assert [row["sm_util_pct"] for row in raw] == [float(i + 1) for i in range(reads)]
    (summary,) = sampler.summaries()
    assert (summary.samples, summary.duration_s) == (reads, float(reads - 1))
    assert summary.sm_util_max_pct == float(reads)


def test_sampler_without_probes_is_empty():
    threads = threading.active_count()
    with TelemetrySampler([], interval_s=0.001) as sampler:
        assert threading.active_count() == threads  # no thread for nothing to sample
    assert sampler.summaries() == []
    assert sampler.raw_samples() == []


def fake_pynvml(gpu_count: int) -> SimpleNamespace:
    return SimpleNamespace(
        NVMLError=FakeNVMLError,
        nvmlInit=lambda: None,
        nvmlDeviceGetCount=lambda: gpu_count,
        nvmlDeviceGetHandleByIndex=lambda i: f"handle{i}",
    )


def test_probes_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(4))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    probes = nvml_telemetry_probes()
    assert [(probe.device, probe._handle) for probe in probes] == [
        ("cuda:0", "handle2"),
        ("cuda:1", "handle0"),
    ]


def test_no_package_means_no_probes(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert nvml_telemetry_probes() == []


def busy(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


@pytest.mark.parametrize("pid", [None, os.getpid()], ids=["os-times", "proc-stat"])
def test_process_cpu_time_measures_a_busy_loop(pid):
    with ProcessCpuTime(pid) as cpu:
        busy(0.3)
    summary = cpu.summary()
    assert (summary.device, summary.source) == ("cpu", "process-cpu-time")
    assert (summary.sample_interval_s, summary.samples) == (None, 0)
    assert summary.duration_s >= 0.3
    tick_s = 1 / os.sysconf("SC_CLK_TCK")  # the kernel counts CPU time in ticks
    assert 0 < summary.cpu_time_s <= summary.duration_s * os.cpu_count() + 2 * tick_s


@pytest.mark.parametrize("pid", [None, os.getpid()], ids=["os-times", "proc-stat"])
def test_process_cpu_time_excludes_sleep(pid):
    with ProcessCpuTime(pid) as cpu:
        time.sleep(0.3)
    summary = cpu.summary()
    assert summary.duration_s >= 0.3
    assert summary.cpu_time_s < 0.1


def test_process_cpu_time_summary_needs_a_finished_block():
    cpu = ProcessCpuTime()
    with pytest.raises(RuntimeError):
        cpu.summary()
    with cpu, pytest.raises(RuntimeError):
        cpu.summary()
