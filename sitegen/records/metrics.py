"""The metric definitions (the method page states them), applied to an engine's stream.
Pure functions."""

from __future__ import annotations

from collections.abc import Sequence

from sitegen.records.record_models import TrialMetrics
from sitegen.records.stream import StreamChunk, StreamEnd


def compute_metrics(t0: float, chunks: Sequence[StreamChunk], end: StreamEnd) -> TrialMetrics:
    """Timings relative to ``t0`` and the engine's counts for one request.

    ``gen_tps`` excludes the first token: (n − 1) / (t_last − t_first), with n from
    the engine's token count (chunks may carry several tokens), so it is ``None``
    when fewer than two tokens or a single chunk arrived.
    """
    first_visible = next((c.t for c in chunks if c.answer or c.reasoning), None)
    first_answer = next((c.t for c in chunks if c.answer.strip()), None)
    t_first = chunks[0].t if chunks else None
    t_last = chunks[-1].t if chunks else None
    n = end.generated_tokens

    generation_s = t_last - t_first if t_first is not None and t_last is not None else None
    gen_tps = None
    if n is not None and n >= 2 and generation_s:
        gen_tps = (n - 1) / generation_s

    def since_t0(t: float | None) -> float | None:
        return None if t is None else t - t0

    return TrialMetrics(
        ttft_s=since_t0(t_first),
        t_first_visible_s=since_t0(first_visible),
        t_first_answer_s=since_t0(first_answer),
        gen_tps=gen_tps,
        native_tps=end.native_tps,
        t_natural_finish_s=end.t - t0 if end.finish == "stop" else None,
        e2e_s=end.t - t0,
        generated_tokens=n,
        finish=end.finish,
        answer_reached=first_answer is not None,
        draft_proposed=end.draft_proposed,
        draft_accepted=end.draft_accepted,
        chunks=len(chunks),
        generation_s=generation_s if generation_s else None,
        prompt_processing_s=end.prompt_processing_s,
        reasoning_tokens=end.reasoning_tokens,
        answer_tokens=end.answer_tokens,
        chunk_times_s=[round(c.t - t0, 6) for c in chunks],
    )
