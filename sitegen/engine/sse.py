"""Streaming server-sent events (OpenAI style: ``data: {...}`` lines ending with ``[DONE]``).

Each line is stamped with the monotonic clock as it arrives. A background thread reads
the response so that the request's total deadline holds even while the server is
silent (a long prefill, a stall); every way a stream can fail becomes a ``StreamError``
with a reason, which ``stream_openai`` turns into an error ``StreamEnd``.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from sitegen.engine.openai_stream import OpenAIStreamParser
from sitegen.records.stream import StreamEvent

_DONE = "[DONE]"


@dataclass(frozen=True)
class SseEvent:
    """One decoded ``data:`` object and the monotonic time its line arrived."""

    t: float
    data: dict[str, Any]


class StreamError(Exception):
    """The stream did not reach its end; ``reason`` goes into the record."""

    def __init__(self, reason: str, t: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.t = t


def stream_openai(
    client: httpx.Client,
    path: str,
    body: dict[str, Any],
    timeout_s: float,
    parser: OpenAIStreamParser,
) -> Iterator[StreamEvent]:
    """POST ``body`` and yield the parser's chunks, then exactly one ``StreamEnd``; never raises
    for a failed request (timeout, HTTP error, dropped connection, malformed data)."""
    try:
        for event in read_events(client, path, body, timeout_s):
            chunk = parser.feed(event.data, event.t)
            if chunk is not None:
                yield chunk
    except StreamError as failure:
        yield parser.end(t=failure.t, error=failure.reason)
        return
    yield parser.end(t=parser.t_last_event or time.monotonic())


def read_events(
    client: httpx.Client, path: str, body: dict[str, Any], timeout_s: float
) -> Iterator[SseEvent]:
    """POST ``body`` to ``path`` and yield every ``data:`` object until ``[DONE]`` or the end
    of the stream. Raises ``StreamError`` when ``timeout_s`` passes (counted from the call),
    on an HTTP error status, a dropped connection or data that is not JSON."""
    deadline = time.monotonic() + timeout_s
    lines: queue.Queue[_Line | _Closed] = queue.Queue()
    stop = threading.Event()
    reader = threading.Thread(
        target=_read_lines,
        args=(client, path, body, timeout_s, lines, stop),
        name="sse-reader",
        daemon=True,
    )
    reader.start()
    try:
        while True:
            try:
                item = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                item = None
            if item is None or item.t > deadline:
                raise StreamError(f"timeout: no end after {timeout_s:g} s", time.monotonic())
            if isinstance(item, _Closed):
                if item.error is not None:
                    raise StreamError(item.error, item.t)
                return
            field, _, value = item.text.partition(":")
            value = value.strip()
            if field == "error":  # older llama-server versions send `error: {...}` events
                raise StreamError(f"server error: {error_message(value)}", item.t)
            if field != "data" or not value:
                continue  # blank separators, comments, `event:`/`id:` fields
            if value == _DONE:
                return
            try:
                data = json.loads(value)
            except json.JSONDecodeError:
                raise StreamError(f"malformed stream data: {value[:200]!r}", item.t) from None
            yield SseEvent(item.t, data)
    finally:
        # The reader closes the connection at the next line it receives (or at its own read
        # timeout), which makes the server drop the request. Waiting for that keeps an
        # abandoned request from overlapping the next trial on a single-slot server.
        stop.set()
        reader.join()


@dataclass(frozen=True)
class _Line:
    t: float
    text: str


@dataclass(frozen=True)
class _Closed:
    t: float
    error: str | None = None


def _read_lines(
    client: httpx.Client,
    path: str,
    body: dict[str, Any],
    timeout_s: float,
    lines: queue.Queue[_Line | _Closed],
    stop: threading.Event,
) -> None:
    received = False
    try:
        with client.stream("POST", path, json=body, timeout=timeout_s) as response:
            if response.status_code >= 400:
                response.read()
                message = error_message(response.text)
                lines.put(_Closed(time.monotonic(), f"HTTP {response.status_code}: {message}"))
                return
            for text in response.iter_lines():
                received = True
                lines.put(_Line(time.monotonic(), text))
                if stop.is_set():
                    return
    except httpx.TimeoutException:
        lines.put(
            _Closed(time.monotonic(), f"timeout: the server sent nothing for {timeout_s:g} s")
        )
    except httpx.HTTPError as exc:
        what = "connection dropped mid-stream" if received else "connection failed"
        lines.put(_Closed(time.monotonic(), f"{what}: {_describe(exc)}"))
    else:
        lines.put(_Closed(time.monotonic()))


def error_message(text: str) -> str:
    """The message of an error body (``{"error": {"message": …}}``, ``{"message": …}``,
    FastAPI's ``{"detail": …}``), else the text itself, shortened."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text.strip()[:500] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            for key in ("message", "detail"):
                if error.get(key):
                    return str(error[key])
        elif error:
            return str(error)
    return text.strip()[:500]


def _describe(exc: httpx.HTTPError) -> str:
    """httpx's message (its own or the cause's), with the exception type when it has none."""
    message = str(exc) or str(exc.__cause__ or "")
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
