"""Benchmark results written by other tools, read into measurements that keep their source:
GuideLLM, vLLM's ``bench serve``, NVIDIA AIPerf, llama-bench and plain CSV.

Each importer is a pure function from a file's bytes to an ``ImportedSource``
(``records.import_source``); ``formats.import_source`` runs one by format name. What the
files cannot say (hardware, engine, model, sampling, which run is which condition) comes
from the user's declaration (``declaration``).
"""
