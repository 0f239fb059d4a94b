"""Prompt caching as the providers document it, for the local stand-ins of their APIs.

Anthropic Messages (prompt-caching guide): the prompt is a sequence of blocks (tools, then
system, then each message's content); a block carrying `cache_control`, and the last block
when the request has a top-level `cache_control` (automatic caching), is a breakpoint. For
each breakpoint the longest live cached prefix ending at most `lookback` blocks before it is
found and read; every breakpoint past that point whose prefix reaches the model's minimum
length is written, at its own TTL. An entry lives `ttl` from its last use. Usage reports
`cache_read_input_tokens`, `cache_creation_input_tokens` (split by TTL under
`cache_creation`) and `input_tokens` for the rest.

OpenAI (prompt-caching guide): a prompt of `min_tokens` or more has its prefix cached
without being asked and without a charge; a later prompt reads the longest cached prefix,
counted in `increment`-token steps above the minimum. In-memory entries are evicted after
`in_memory_idle_seconds` without use; `prompt_cache_retention: 24h` keeps them a day. Where
a request carries explicit breakpoints (`prompt_cache_breakpoint`, GPT-5.6 and later), the
prefix up to each one is written and billed (`cache_write_tokens`), and lives at least
`explicit_min_seconds`.

Token counts are this stand-in's own: UTF-8 bytes / 4 for text and JSON, and each
provider's published image formula (Anthropic: width x height / 750 after scaling to fit
1568 px and 1.15 megapixels; OpenAI: 32 px patches). The clock is `time.monotonic`, so a
stand-in run under `faketime` with a speed factor sees a full run's gaps in seconds.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
# Price of each kind of input token relative to plain input (Anthropic's pricing table;
# OpenAI's explicit writes as reported for GPT-5.6).
ANTHROPIC_RATES = {"input": 1.0, "write_5m": 1.25, "write_1h": 2.0, "read": 0.1}


def text_tokens(text: str) -> int:
    return math.ceil(len(text.encode()) / 4)


def _image_size(data: str) -> tuple[int, int]:
    padded = data + "=" * (-len(data) % 4)
    raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    with Image.open(io.BytesIO(raw)) as image:
        return image.size


def anthropic_image_tokens(width: int, height: int) -> int:
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return math.ceil(round(width * scale) * round(height * scale) / 750)


def openai_image_tokens(width: int, height: int) -> int:
    return min(1536, math.ceil(width / 32) * math.ceil(height / 32))


@dataclass
class Block:
    """One cacheable unit of a prompt: what identifies it, its tokens, its breakpoint."""

    key: str
    tokens: int
    ttl: str | None = None  # set when the block is a breakpoint
    latest_turn: bool = False  # OpenAI: in the latest user or tool message


@dataclass
class Entry:
    expires: float
    life: float


@dataclass
class CacheUsage:
    """One request's input split by how it is billed."""

    fresh: int
    read: int = 0
    written: dict[str, int] = field(default_factory=dict)
    # where the request asked for a cache entry: (block number counted from the end, TTL);
    # Anthropic's top-level marker shows as ("top", TTL)
    marks: list[tuple[int | str, str]] = field(default_factory=list)
    blocks: int = 0

    @property
    def total(self) -> int:
        return self.fresh + self.read + sum(self.written.values())


def _prefix_hashes(blocks: list[Block]) -> list[str]:
    running = hashlib.sha256()
    hashes = []
    for block in blocks:
        running.update(block.key.encode())
        hashes.append(running.copy().hexdigest())
    return hashes


def _cumulative(blocks: list[Block]) -> list[int]:
    total, sums = 0, []
    for block in blocks:
        total += block.tokens
        sums.append(total)
    return sums


class PromptCache:
    """The provider's cache of prompt prefixes: one per stand-in process, thread-safe."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.entries: dict[str, Entry] = {}
        self.lock = threading.Lock()

    def _live(self, key: str, now: float) -> Entry | None:
        entry = self.entries.get(key)
        return entry if entry is not None and entry.expires > now else None

    # ---- Anthropic ------------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> CacheUsage:
        blocks = anthropic_blocks(body)
        if not blocks:
            return CacheUsage(fresh=0)
        top = body.get("cache_control")
        marks: list[tuple[int | str, str]] = [
            (i - len(blocks), str(b.ttl)) for i, b in enumerate(blocks) if b.ttl is not None
        ]
        if isinstance(top, dict):
            marks.append(("top", str(top.get("ttl") or "5m")))
            if blocks[-1].ttl is None:
                blocks[-1].ttl = str(top.get("ttl") or "5m")
        minimum = int(self.config.get("anthropic_min_tokens", 1024))
        lookback = int(self.config.get("anthropic_lookback_blocks", 20))
        hashes, sums = _prefix_hashes(blocks), _cumulative(blocks)
        breakpoints = [i for i, b in enumerate(blocks) if b.ttl is not None]
        with self.lock:
            now = time.monotonic()
            hit = -1
            for point in breakpoints:
                for j in range(point, max(-1, point - lookback), -1):
                    if self._live(hashes[j], now) is not None:
                        hit = max(hit, j)
                        break
            if hit >= 0:
                entry = self.entries[hashes[hit]]
                entry.expires = now + entry.life
            read = sums[hit] if hit >= 0 else 0
            usage = CacheUsage(fresh=0, read=read, marks=marks, blocks=len(blocks))
            covered = hit
            for point in breakpoints:
                if point <= covered or sums[point] < minimum:
                    continue
                ttl = str(blocks[point].ttl)
                start = sums[covered] if covered >= 0 else 0
                usage.written[ttl] = usage.written.get(ttl, 0) + sums[point] - start
                life = TTL_SECONDS[ttl]
                self.entries[hashes[point]] = Entry(now + life, life)
                covered = point
        usage.fresh = sums[-1] - usage.read - sum(usage.written.values())
        return usage

    # ---- OpenAI -----------------------------------------------------------------------

    def openai(self, body: dict[str, Any], api: str) -> CacheUsage:
        blocks = openai_blocks(body, api)
        if not blocks:
            return CacheUsage(fresh=0)
        if billed_writes(str(body.get("model", ""))):
            return self._openai_billed(body, blocks)
        return self._openai_free(body, blocks)

    def _openai_free(self, body: dict[str, Any], blocks: list[Block]) -> CacheUsage:
        """Before GPT-5.6: every prefix of a long prompt is kept, for free; a read counts the
        longest kept prefix in `increment` steps above the minimum."""
        minimum = int(self.config.get("openai_min_tokens", 1024))
        step = int(self.config.get("openai_increment", 128))
        life = (
            86_400.0
            if body.get("prompt_cache_retention") == "24h"
            else float(self.config.get("openai_in_memory_idle_seconds", 300))
        )
        hashes, sums = _prefix_hashes(blocks), _cumulative(blocks)
        with self.lock:
            now = time.monotonic()
            hit = self._longest_live(hashes, now)
            cached = sums[hit] if hit >= 0 and sums[hit] >= minimum else 0
            cached = minimum + (cached - minimum) // step * step if cached else 0
            for j, total in enumerate(sums):
                if total >= minimum and j > hit:
                    self.entries[hashes[j]] = Entry(now + life, life)
        return CacheUsage(fresh=sums[-1] - cached, read=cached)

    def _openai_billed(self, body: dict[str, Any], blocks: list[Block]) -> CacheUsage:
        """GPT-5.6 and later: prefixes are written at breakpoints only (the marked blocks,
        and in implicit mode the end of the latest user or tool message as well), billed,
        when they reach the minimum; a read needs an entry at a boundary of this prompt."""
        minimum = int(self.config.get("openai_min_tokens", 1024))
        life = float(self.config.get("openai_explicit_min_seconds", 1800))
        explicit = (body.get("prompt_cache_options") or {}).get("mode") == "explicit"
        points = [i for i, b in enumerate(blocks) if b.ttl is not None]
        marks: list[tuple[int | str, str]] = [(i - len(blocks), "explicit") for i in points]
        if not explicit:
            points.append(max(i for i, b in enumerate(blocks) if b.latest_turn))
        hashes, sums = _prefix_hashes(blocks), _cumulative(blocks)
        with self.lock:
            now = time.monotonic()
            hit = self._longest_live(hashes, now)
            read = sums[hit] if hit >= 0 else 0
            usage = CacheUsage(fresh=0, read=read, marks=marks, blocks=len(blocks))
            covered = hit
            for point in sorted(set(points)):
                if point <= covered or sums[point] < minimum:
                    continue
                start = sums[covered] if covered >= 0 else 0
                usage.written["30m"] = usage.written.get("30m", 0) + sums[point] - start
                self.entries[hashes[point]] = Entry(now + life, life)
                covered = point
        usage.fresh = sums[-1] - usage.read - sum(usage.written.values())
        return usage

    def _longest_live(self, hashes: list[str], now: float) -> int:
        hit = next((j for j in range(len(hashes) - 1, -1, -1) if self._live(hashes[j], now)), -1)
        if hit >= 0:
            entry = self.entries[hashes[hit]]
            entry.expires = now + entry.life
        return hit


def billed_writes(model: str) -> bool:
    """OpenAI bills cache writes from GPT-5.6 on (prompt-caching guide)."""
    found = re.search(r"gpt-(\d+)(?:\.(\d+))?", model)
    if found is None:
        return False
    return (int(found.group(1)), int(found.group(2) or 0)) >= (5, 6)


# ---- the prompt as blocks -----------------------------------------------------------


def _canonical(node: Any, drop: tuple[str, ...]) -> str:
    if isinstance(node, dict):
        node = {k: v for k, v in node.items() if k not in drop}
    return json.dumps(node, sort_keys=True)


CACHE_FIELDS = ("cache_control", "prompt_cache_breakpoint")


def _content_tokens(node: Any, image_tokens: Any) -> int:
    """Tokens of a content block: images by the provider's formula, the rest as text (the
    cache markers are not counted: they do not change what the model reads)."""
    found: list[tuple[int, int]] = []
    rest = _strip_images(node, found)
    images: int = sum(image_tokens(w, h) for w, h in found)
    return images + text_tokens(json.dumps(rest))


def _strip_images(node: Any, found: list[tuple[int, int]]) -> Any:
    if isinstance(node, dict):
        source = node.get("source")
        if node.get("type") == "image" and isinstance(source, dict) and "data" in source:
            found.append(_image_size(source["data"]))
            return {}
        url = node.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        if isinstance(url, str) and url.startswith("data:image/"):
            found.append(_image_size(url.split(",", 1)[1]))
            return {}
        if node.get("type") in ("text", "input_text") and isinstance(node.get("text"), str):
            return node["text"]
        return {k: _strip_images(v, found) for k, v in node.items() if k not in CACHE_FIELDS}
    if isinstance(node, list):
        return [_strip_images(item, found) for item in node]
    return node


def anthropic_blocks(body: dict[str, Any]) -> list[Block]:
    blocks: list[Block] = []

    def add(role: str, node: Any) -> None:
        control = node.get("cache_control") if isinstance(node, dict) else None
        ttl = str(control.get("ttl") or "5m") if isinstance(control, dict) else None
        key = role + ":" + _canonical(node, CACHE_FIELDS)
        blocks.append(Block(key, _content_tokens(node, anthropic_image_tokens), ttl))

    for tool in body.get("tools") or []:
        add("tool", tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add("system", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts or []:
            add(str(message.get("role")), part)
    return blocks


def openai_blocks(body: dict[str, Any], api: str) -> list[Block]:
    """Responses `input` items or chat `messages`, one block per content part; the blocks of
    the latest user or tool message are marked as such (implicit mode's breakpoint)."""
    blocks: list[Block] = []
    items = body.get("input") if api == "responses" else body.get("messages")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for tool in body.get("tools") or []:
        blocks.append(Block("tool:" + _canonical(tool, ()), text_tokens(json.dumps(tool))))
    items = list(items or [])
    turns = [i for i, item in enumerate(items) if _is_turn(item)]
    latest = turns[-1] if turns else len(items) - 1
    for index, item in enumerate(items):
        content = item.get("content") if isinstance(item, dict) else None
        role = str(item.get("role", item.get("type"))) if isinstance(item, dict) else "?"
        parts = content if isinstance(content, list) else [item]
        for part in parts:
            mark = isinstance(part, dict) and part.get("prompt_cache_breakpoint") is not None
            key = role + ":" + _canonical(part, CACHE_FIELDS)
            tokens = _content_tokens(part, openai_image_tokens)
            blocks.append(Block(key, tokens, "explicit" if mark else None, index == latest))
    return blocks


def _is_turn(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    return item.get("role") in ("user", "tool") or item.get("type") == "function_call_output"
