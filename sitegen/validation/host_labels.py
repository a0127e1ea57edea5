"""A host label names a machine, never its hardware: ``redact: {hosts: {vm: "NVIDIA H200
node"}}`` on a CPU run would publish a hardware claim no record makes (every page says
what a run ran on from the records, C-HARDWARE). Labels naming a vendor, a kind of device
or a device family are refused, each with one line naming ``mkdocs.yml`` and the host.

The vocabulary is data (``HARDWARE_VOCABULARY``): vendors, kinds of device, product
families and the model numbers of accelerators, matched as whole words of the label,
case aside (``gpu-node`` names a GPU; ``gpubox`` names nothing sitegen knows). Words that
are also the names machines are often given (``grace``, ``hopper``, ``turing``, ``ada``,
``tesla``, ``arm``) are left out: a label ``turing`` names a machine.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from sitegen.core.errors import Issue
from sitegen.core.site_settings import SiteSettings
from sitegen.validation.rules import check

HARDWARE_VOCABULARY: dict[str, tuple[str, ...]] = {
    "vendors": (
        "NVIDIA", "AMD", "Intel", "Qualcomm", "Graviton", "Habana",
        "Cerebras", "Groq", "SambaNova", "Tenstorrent", "Huawei", "Ascend", "Moore Threads",
        "Biren", "Cambricon", "Google TPU",
    ),
    "kinds": (
        "GPU", "GPUs", "CPU", "CPUs", "TPU", "TPUs", "NPU", "NPUs", "APU", "IPU", "LPU",
        "accelerator", "accelerators", "CUDA", "ROCm", "NVLink", "NVSwitch", "HBM", "HBM2",
        "HBM2e", "HBM3", "HBM3e", "GDDR6", "GDDR6X", "GDDR7", "PCIe", "SXM", "SXM4", "SXM5",
    ),
    "families": (
        "GeForce", "Quadro", "RTX", "GTX", "DGX", "HGX", "Jetson", "Radeon", "Instinct",
        "Xeon", "EPYC", "Ryzen", "Threadripper", "Core i3", "Core i5", "Core i7", "Core i9",
        "Core Ultra", "Gaudi", "Gaudi2", "Gaudi3", "Trainium", "Inferentia",
        "Snapdragon", "M1 Pro", "M1 Max", "M1 Ultra", "M2 Pro", "M2 Max", "M2 Ultra",
        "M3 Pro", "M3 Max", "M3 Ultra", "M4 Pro", "M4 Max",
    ),
    "models": (
        "H100", "H200", "H800", "H20", "GH200", "GB200", "GB300", "B100", "B200", "B300",
        "A100", "A800", "A10", "A10G", "A30", "A40", "A4000", "A5000", "A6000",
        "L4", "L20", "L40", "L40S", "V100", "P100", "P40", "T4", "K80", "RTX 4090",
        "MI100", "MI210", "MI250", "MI250X", "MI300", "MI300A", "MI300X", "MI325X", "MI350X",
        "MI355X", "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e", "v5e", "v5p", "v6e",
    ),
}  # fmt: skip
"""Words that name hardware, by what they are."""


@cache
def _hardware_words() -> re.Pattern[str]:
    words = sorted(
        {w for group in HARDWARE_VOCABULARY.values() for w in group}, key=len, reverse=True
    )
    spelled = "|".join(r"[\s_-]*".join(map(re.escape, w.split())) for w in words)
    # A whole word of the label: letters and digits around it belong to another word,
    # but a count after it is part of its name (H100x8, 8xH100 name an H100 all the same).
    return re.compile(
        rf"(?<![A-Za-z0-9])(?:\d+x)?(?:{spelled})(?:s|x\d+)?(?![A-Za-z0-9])", re.IGNORECASE
    )


def hardware_named(label: str) -> list[str]:
    """The words of ``label`` that name hardware (``NVIDIA``, ``H200``, ``gpu``)."""
    return [m.group() for m in _hardware_words().finditer(label)]


@check("C-HARDWARE", "project")
def _host_labels_name_no_hardware(project_dir: Path) -> list[Issue]:
    """Every label ``mkdocs.yml`` declares for a host (``redact.hosts``)."""
    from sitegen.validation.figure_checks import _validated

    path = project_dir / "mkdocs.yml"
    settings = _validated(SiteSettings, path)
    if settings is None:
        return []
    return [
        Issue(
            f"{path} → redact.hosts.{host}",
            f"the label {label!r} names hardware ({', '.join(map(repr, found))}): a label "
            "names a machine (e.g. 'node A'); what it ran on comes from the records",
            "C-HARDWARE",
        )
        for host, label in settings.redact.hosts.items()
        if (found := hardware_named(label))
    ]
