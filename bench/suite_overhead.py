"""GPU: `cutegen suite run examples/ --kernels examples/` in process, then its overhead per problem against the
sum of its jobs' own times, and the report with real figures. Optionally `--agent` over three problems with the
scripted endpoint (real CUDA replies: one correct, one wrong on the tail, one that does not compile).

    python bench/suite_overhead.py [--results .cutegen/suite-h200] [--profile] [--agent] [--out suite_overhead.json]

A job's own time is what it spent compiling (nvcc, on a CPU slot) and on its GPU worker (the harness's trials and
timing, torch.compile's warm-up included); the time it waited for a free CPU or GPU slot is the resource, not the
suite. Overhead per problem = its wall time in the suite − own time − waiting: discovery, threads, the verify
record and the results line, events. Target: Σ overhead / Σ own < 5 %.

--results keeps the run: a device call cut short by its time limit is resumed by the same command (the rows of
earlier calls are skipped, and the overhead is computed over the rows written by this call).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from cutegen.settings import Settings  # noqa: E402
from cutegen.suite import report  # noqa: E402
from cutegen.suite.judge import Budget  # noqa: E402
from cutegen.suite.runner import SuiteConfig, run_suite  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", type=Path, default=ROOT / ".cutegen" / "suite-h200", help="results folders go here")
    ap.add_argument("--problems", type=Path, nargs="*", default=[ROOT / "examples"])
    ap.add_argument("--kernels", type=Path, default=ROOT / "examples")
    ap.add_argument("--profile", action="store_true", help="also profile each correct kernel (ncu)")
    ap.add_argument("--agent", action="store_true", help="also the --agent run with the scripted endpoint")
    ap.add_argument("--sandbox", choices=["required", "off"], default="required",
                    help="--agent: candidates jailed (needs bubblewrap on the GPU machine) or not")
    ap.add_argument("--out", type=Path, help="figures as JSON")
    args = ap.parse_args()
    figures = {"kernels": kernels_run(args)}
    if args.agent:
        figures["agent"] = agent_run(args)
    print(json.dumps(figures, indent=1))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))
    return 0


def kernels_run(args) -> dict:
    out = args.results / "kernels"
    before = {r["name"] for r in report.open_run(out).rows} if out.exists() else set()
    started = time.perf_counter()
    first: list[float] = []

    def on_event(e) -> None:
        if e.kind == "problem-started" and not first:
            first.append(time.perf_counter() - started)
        _print(e)

    summary = run_suite(args.problems, SuiteConfig(out=out, kernels=args.kernels, profile=args.profile,
                                                   settings=Settings(test_timeout=300)), on_event=on_event)
    wall = time.perf_counter() - started
    md, page = report.write([out])
    print(md.read_text())
    rows = [r for r in summary.rows if r["name"] not in before]
    # startup: discovery, the GPU workers' start, torch's import, until the first problem begins (once per run)
    return {**overhead(rows), "suite_wall_s": round(wall, 2), "startup_s": round(first[0], 2) if first else None,
            "report": str(page),
            "summary": _jsonable(report.summary(report.open_run(out)))}


def overhead(rows: list[dict]) -> dict:
    """Σ (wall − own − waiting) / Σ own over the problems that ran a job."""
    ran = [r for r in rows if r.get("own_seconds")]
    if not ran:
        return {"problems": 0}
    extra = [max(0.0, r["wall_seconds"] - r["own_seconds"] - r.get("queue_seconds", 0.0)) for r in ran]
    own = sum(r["own_seconds"] for r in ran)
    return {"problems": len(ran), "own_s": round(own, 2), "overhead_s": round(sum(extra), 3),
            "overhead_share": round(sum(extra) / own, 4),
            "overhead_per_problem_median_s": round(statistics.median(extra), 3),
            "overhead_per_problem_max_s": round(max(extra), 3),
            "waiting_s": round(sum(r.get("queue_seconds", 0.0) for r in ran), 2),
            "per_problem": {r["name"]: {"own_s": r["own_seconds"], "wall_s": r["wall_seconds"],
                                        "waiting_s": r.get("queue_seconds"), "overhead_s": round(e, 3)}
                            for r, e in zip(ran, extra)}}


def agent_run(args) -> dict:
    from tests.support.scripted_openai import ScriptedOpenAI

    ex = ROOT / "examples"
    softsign = (ex / "softsign" / "softsign.cu").read_text()
    tail_bug = "".join(line for line in (ROOT / "tests" / "kernels" / "tail_bug.cu").read_text().splitlines(True)
                       if "cutegen: problem=" not in line)  # the agent pairs its files with their problem itself
    broken = softsign.replace("return", "retrun", 1)
    entries = [{"match": "TASK: generate `softsign.cu`", "reply": f"```cuda\n{softsign}```"},
               {"match": "TASK: generate `softsign_tail.cu`", "reply": f"```cuda\n{tail_bug}```"},
               {"match": "TASK: generate `swish.cu`", "reply": f"```cuda\n{broken}```"}]
    os.environ["CUTEGEN_BENCH_KEY"] = "sk-bench"
    out = args.results / "agent"
    with ScriptedOpenAI(entries, expect_key="sk-bench", log=open(os.devnull, "w")) as server:
        settings = Settings(llm_base_url=server.url, llm_model="scripted", llm_api_key_env="CUTEGEN_BENCH_KEY",
                            llm_retries=0, test_timeout=300, sandbox=args.sandbox)
        summary = run_suite([ex / "softsign" / "softsign.py", ex / "softsign_tail" / "softsign_tail.py",
                             ex / "swish" / "swish.py"],
                            SuiteConfig(out=out, agent=True, settings=settings,
                                        budget=Budget(rounds=1, llm_calls=4, wall_s=600, optimize_steps=0)),
                            on_event=_print)
    md, _ = report.write([out])
    print(md.read_text())
    return {"verdicts": {r["name"]: r["verdict"] for r in summary.rows}, "seconds": round(summary.seconds, 1)}


def _print(e) -> None:
    if e.kind == "problem-done":
        r = e.row or {}
        speed = f" {r['speedup_eager']:.2f}x eager {r.get('speedup_compile') or 0:.2f}x compile" \
            if r.get("speedup_eager") else ""
        print(f"[{e.done}/{e.total}] {e.name}: {r.get('verdict')}{speed} own {r.get('own_seconds')} s "
              f"wall {r.get('wall_seconds')} s", flush=True)


def _jsonable(d):
    return json.loads(json.dumps(d, default=str))


if __name__ == "__main__":
    sys.exit(main())
