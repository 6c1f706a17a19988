"""Prompt budgets: every prompt is fitted into the endpoint's context window (cutegen.llmContextTokens)
with room for the reply (cutegen.maxTokens), keeping the most useful parts.

Tokens are estimated, not counted with a tokenizer: the endpoint may serve any model (Llama, Qwen,
DeepSeek, GPT), each with its own tokenizer, and tiktoken fetches its tables from the internet on
first use, which the offline GPU machine cannot do. The estimate is UTF-8 bytes / 3.0, on the high
side for CUDA/C++ and English (about 3.2-4 bytes per token with the GPT and Llama tokenizers), and
it is calibrated by the endpoint's own count: after each reply, the ratio of the reported
prompt_tokens to the estimate (never below 1) scales later estimates for this agent.

A prompt is a list of parts, each with a rank: rank 0 is never left out (the task, the condensed
diagnostics, the kernel, the answer rules); the others are left out from the highest rank down
(older attempts, then the weaker knowledge hits, then the diagnosis text), so the best knowledge hit
is the last to go. If that is not enough, the condensed failure text is shortened (with a marker);
the kernel and the rules are never cut, so a kernel too large for the window is sent whole and the
record says `over`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BYTES_PER_TOKEN = 3.0
MESSAGE_OVERHEAD = 8  # tokens a chat template adds per message (role markers), rounded up
CUT_MARK = "\n[... cut here to fit the model's context window ...]"
MARGIN = 0.05  # of the window kept free for what the estimate misses


def estimate(text: str) -> int:
    return math.ceil(len(text.encode()) / BYTES_PER_TOKEN)


@dataclass
class Part:
    text: str
    rank: int = 0  # 0: always kept; higher ranks are left out first
    label: str = ""  # what it is, for the record of what was left out
    cuttable: bool = False  # may be shortened when leaving parts out is not enough (never the kernel)


@dataclass
class Budget:
    context_tokens: int
    reply_tokens: int
    scale: float = 1.0  # reported / estimated prompt tokens, from the endpoint's usage
    last: dict = field(default_factory=dict)  # the latest fit: estimate, limit, what was left out

    @property
    def limit(self) -> int:
        return max(256, int(self.context_tokens * (1 - MARGIN)) - self.reply_tokens)

    def tokens(self, text: str) -> int:
        return math.ceil(estimate(text) * self.scale)

    def fit(self, system: str, parts: list[Part]) -> str:
        """The user message: the parts in their order, without those left out to fit."""
        room = self.limit - self.tokens(system) - 2 * MESSAGE_OVERHEAD
        kept = [p for p in parts if p.text]
        dropped: list[str] = []
        for rank in sorted({p.rank for p in kept if p.rank > 0}, reverse=True):
            if self._size(kept) <= room:
                break
            for p in [p for p in kept if p.rank == rank][::-1]:  # the later (weaker) of a rank first
                if self._size(kept) <= room:
                    break
                kept.remove(p)
                dropped.append(p.label or f"rank {rank}")
        cut = []
        cuttable = [p for p in kept if p.cuttable]
        if self._size(kept) > room and cuttable:  # only rank-0 parts are left: shorten the largest cuttable one
            big = max(cuttable, key=lambda p: len(p.text))
            over = self._size(kept) - room
            drop = math.ceil((over + 4) * BYTES_PER_TOKEN * self.scale) + len(CUT_MARK.encode())
            keep_bytes = max(0, len(big.text.encode()) - drop)
            cut.append(big.label or "the largest part")
            kept[kept.index(big)] = Part(big.text.encode()[:keep_bytes].decode(errors="ignore") + CUT_MARK,
                                         big.rank, big.label)
        text = "\n\n".join(p.text for p in kept)
        self.last = {"estimated_prompt_tokens": self.tokens(system) + self.tokens(text) + 2 * MESSAGE_OVERHEAD,
                     "limit": self.limit, "scale": round(self.scale, 3), "left_out": dropped, "cut": cut}
        self.last["over"] = self.last["estimated_prompt_tokens"] > self.limit  # the kept parts alone do not fit
        return text

    def _size(self, parts: list[Part]) -> int:
        return self.tokens("\n\n".join(p.text for p in parts))

    def observe(self, reported_prompt_tokens: int) -> None:
        """Calibrate with the endpoint's count for the latest fitted prompt."""
        estimated = self.last.get("estimated_prompt_tokens")
        if reported_prompt_tokens and estimated:
            self.scale = max(1.0, self.scale * reported_prompt_tokens / estimated)
