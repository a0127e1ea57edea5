"""Quality measurement: problem suites, document tasks and objective scoring."""

from sitegen.quality.answers import AnswerSpec
from sitegen.quality.documents import DocumentTask, compose_document_prompt, generate_document_task
from sitegen.quality.scoring import DocumentScore, ItemScore, Score, score_answer, score_document
from sitegen.quality.suites import (
    ALL_DOMAINS,
    DOMAINS,
    EASY_DOMAIN,
    EASY_TEMPLATES,
    TEMPLATES,
    Domain,
    Problem,
    Suite,
    TemplateInfo,
    generate_suite,
)

__all__ = [
    "ALL_DOMAINS",
    "DOMAINS",
    "EASY_DOMAIN",
    "EASY_TEMPLATES",
    "TEMPLATES",
    "AnswerSpec",
    "DocumentScore",
    "DocumentTask",
    "Domain",
    "ItemScore",
    "Problem",
    "Score",
    "Suite",
    "TemplateInfo",
    "compose_document_prompt",
    "generate_document_task",
    "generate_suite",
    "score_answer",
    "score_document",
]
