"""NVML probes: graceful absence on this CPU machine (nvidia-ml-py installed, no driver),
and the mapping logic against a stand-in ``pynvml`` module with two GPUs."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from sitegen.engine.memory import PeakMemorySampler
from sitegen.engine.nvml import nvml_devices, nvml_probes, parse_visible_devices

MIB = 2**20


def nvml_usable() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return False
    return True


@pytest.mark.skipif(nvml_usable(), reason="this machine has an NVIDIA driver")
def test_no_driver_means_no_gpus():
    assert nvml_probes() == []
    assert nvml_devices() == ([], None, None)


def test_no_package_means_no_gpus(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert nvml_probes() == []
    assert nvml_devices() == ([], None, None)


class FakeNVMLError(Exception):
    pass


def fake_pynvml(gpus: list[dict]) -> SimpleNamespace:
    """The calls sitegen makes, answered from ``gpus`` (index = NVML's PCI order)."""

    def by_uuid(uuid):
        for gpu in gpus:
            if gpu["uuid"] == uuid:
                return gpu
        raise FakeNVMLError("not found")

    def nvlink_state(gpu, link):
        if link >= len(gpu["nvlinks"]):
            raise FakeNVMLError("invalid link")
        return gpu["nvlinks"][link]

    def pcie(key):
        def read(gpu):
            if "pcie" not in gpu:
                raise FakeNVMLError("not supported")
            return gpu["pcie"][key]

        return read

    return SimpleNamespace(
        NVMLError=FakeNVMLError,
        NVML_NVLINK_MAX_LINKS=18,
        NVML_FEATURE_ENABLED=1,
        nvmlInit=lambda: None,
        nvmlDeviceGetCount=lambda: len(gpus),
        nvmlDeviceGetHandleByIndex=lambda i: gpus[i],
        nvmlDeviceGetHandleByUUID=by_uuid,
        nvmlDeviceGetName=lambda gpu: gpu["name"],
        nvmlDeviceGetMemoryInfo=lambda gpu: SimpleNamespace(total=gpu["total"], used=gpu["used"]),
        nvmlSystemGetDriverVersion=lambda: b"570.86.15",
        nvmlDeviceGetNvLinkState=nvlink_state,
        nvmlDeviceGetMaxPcieLinkGeneration=pcie(0),
        nvmlDeviceGetMaxPcieLinkWidth=pcie(1),
    )


def gpu(index: int, nvlinks: list[int], **extra) -> dict:
    return {
        "uuid": f"GPU-{index:04d}",
        "name": b"NVIDIA H100 80GB HBM3",  # older nvidia-ml-py releases return bytes
        "total": 81559 * MIB,
        "used": (1000 + index) * MIB,
        "nvlinks": nvlinks,
        **extra,
    }


@pytest.fixture
def two_gpus(monkeypatch):
    gpus = [gpu(0, [1] * 18), gpu(1, [1] * 18)]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(gpus))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return gpus


def test_devices_driver_and_nvlink(two_gpus):
    devices, driver, interconnect = nvml_devices()
    assert [d.id for d in devices] == ["cuda:0", "cuda:1"]
    assert devices[0].name == "NVIDIA H100 80GB HBM3" and devices[0].memory_total_mib == 81559.0
    assert driver == "570.86.15"
    assert interconnect == "NVLink (18 active links per GPU)"


def test_probes_read_used_memory_per_visible_gpu(two_gpus, monkeypatch):
    probes = nvml_probes()
    assert [(p.device, p.source, p.read_mib()) for p in probes] == [
        ("cuda:0", "nvml-used", 1000.0),
        ("cuda:1", "nvml-used", 1001.0),
    ]
    two_gpus[1]["used"] = 5000 * MIB
    with PeakMemorySampler(probes, interval_s=0.01) as sampler:
        two_gpus[1]["used"] = 2000 * MIB
    assert [m.peak_mib for m in sampler.peaks()] == [1000.0, 5000.0]


def test_cuda_visible_devices_renumbers_like_cuda(two_gpus, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert [(p.device, p.read_mib()) for p in nvml_probes()] == [("cuda:0", 1001.0)]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-0001,GPU-0000")
    assert [p.read_mib() for p in nvml_probes()] == [1001.0, 1000.0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,7,1")  # CUDA stops at the missing GPU 7
    assert [p.read_mib() for p in nvml_probes()] == [1000.0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert nvml_probes() == [] and nvml_devices()[0] == []


def test_interconnect_without_nvlink_is_pcie(monkeypatch):
    gpus = [gpu(0, [0] * 4, pcie=(5, 16)), gpu(1, [])]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(gpus))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert nvml_devices()[2] == "PCIe Gen5 x16"
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([gpu(0, [])]))
    assert nvml_devices()[2] == "PCIe"


def test_uneven_nvlinks_are_listed_per_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml([gpu(0, [1] * 4), gpu(1, [1, 1])]))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert nvml_devices()[2] == "NVLink (active links: cuda:0 4, cuda:1 2)"


def test_parse_visible_devices():
    assert parse_visible_devices(None) is None
    assert parse_visible_devices("") == []
    assert parse_visible_devices("2, 0") == [2, 0]
    assert parse_visible_devices("GPU-abc,MIG-def") == ["GPU-abc", "MIG-def"]
    assert parse_visible_devices("1,-1,0") == [1]
