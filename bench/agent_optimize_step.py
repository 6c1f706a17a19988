"""GPU: one Optimize step on the slow softsign (tests/kernels/slow_correct.cu at the KernelBench size),
with the scripted endpoint (tests/agent/replies/optimize_slow_softsign.json: a broken grid, then 128-bit
vectorization). Prints where the time goes — measuring the current version, profiling, LLM wait, build
(check + build tiers), test, timing — and the candidates verified per minute.

    python bench/agent_optimize_step.py [--llm-delay 0] [--out agent_optimize_step.json]

--llm-delay adds seconds to every scripted reply, to model a real endpoint's latency.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from cutegen.agent.agent import Agent  # noqa: E402
from cutegen.compile import Builder  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402
from tests.support.scripted_openai import ScriptedOpenAI  # noqa: E402

REPLIES = ROOT / "tests" / "agent" / "replies" / "optimize_slow_softsign.json"
SLOW = ROOT / "tests" / "kernels" / "slow_correct.cu"
PROBLEM = ROOT / "examples" / "softsign" / "softsign.py"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm-delay", type=float, default=0.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    entries = [{**e, "delay": args.llm_delay} for e in json.loads(REPLIES.read_text())]
    work = Path(tempfile.mkdtemp(prefix="cutegen-optimize-"))
    kernel = work / "slow_correct.cu"
    kernel.write_text(SLOW.read_text().replace("problem=../../examples/softsign/softsign.py", f"problem={PROBLEM}"))
    os.environ["CUTEGEN_BENCH_KEY"] = "sk-bench"
    worker = Worker()
    with ScriptedOpenAI(entries, expect_key="sk-bench", log=open(os.devnull, "w")) as server:
        settings = Settings(llm_base_url=server.url, llm_model="scripted", llm_api_key_env="CUTEGEN_BENCH_KEY",
                            max_rounds=2, test_timeout=300)
        builder = Builder(discover(settings), settings, work / ".cutegen")  # a cold build cache
        agent = Agent(settings, builder, worker, state_dir=work / ".cutegen")
        started = time.perf_counter()
        try:
            outcome = agent.optimize(kernel, kernel.read_text())
        finally:
            worker.stop()
        total = time.perf_counter() - started
    steps = [json.loads(p.read_text()) for p in sorted(Path(outcome.transcript).parent.glob("*-round*.json"))]
    result = split(steps, outcome, total)
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0 if outcome.ok else 1


def split(steps: list[dict], outcome, total: float) -> dict:
    def fig(step, key):
        return float((step.get("verification") or {}).get("figures", {}).get(key) or 0.0)

    base = next(s for s in steps if s["step"] == "baseline")
    context = next(s for s in steps if s["step"] == "context")
    candidates = [s for s in steps if s["step"] == "verify"]
    llm = sum(s.get("usage", {}).get("wait_s", 0.0) for s in steps if s["step"] == "optimize")
    build = sum(fig(s, "check_s") + fig(s, "build_s") for s in candidates)
    test = sum(fig(s, "test_s") for s in candidates)
    timing = sum(fig(s, "time_s") for s in candidates)
    per_candidate = (llm + build + test + timing) / max(len(candidates), 1)
    return {
        "ok": outcome.ok, "message": outcome.message, "rounds": outcome.rounds,
        "total_s": round(total, 2),
        "current_version_s": {k: round(fig(base, k), 2) for k in ("check_s", "build_s", "test_s", "time_s")},
        "profile_s": round(float(context.get("profile_s") or 0.0), 2),
        "profile": (context["profile"].get("profile") or {}).get("summary") if context.get("profile")
        else context.get("profile_problem"),
        "candidates": len(candidates),
        "candidate_split_s": {"llm_wait": round(llm, 2), "build": round(build, 2), "test": round(test, 2),
                              "time": round(timing, 2)},
        "candidates_verified_per_minute": round(60.0 / per_candidate, 2) if per_candidate else None,
        "speedup": (outcome.proposal.figures.get("speedup") if outcome.proposal else None),
        "label": outcome.proposal.label if outcome.proposal else None,
        "usage": outcome.usage.to_json(),
    }


if __name__ == "__main__":
    sys.exit(main())
