"""sitegen: measure LLM inference and publish bilingual benchmark reports."""

__version__ = "0.1.0"
