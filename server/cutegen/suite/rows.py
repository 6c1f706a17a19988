"""Run record → suite row: the ONE module of the suite that reads the fields of the harness's and the profiler's
run records (and of the worker's replies). When the records become typed, this is the place to adapt.

A row is a flat JSON object, one line of results.jsonl: what the report tables and plots need, nothing nested."""

from __future__ import annotations

COMPILE_FAILURES = ("build-failed", "check-failed")
UNKNOWN = ("not-run", "no-kernel", "suite-error", "no-problem", "problem-error")  # neither correct nor incorrect


def from_record(name: str, record: dict, profile: dict | None = None) -> dict:
    """The row for a `verify_kernel` record (and optionally a `profile_kernel` record of the same kernel)."""
    verdict = record.get("verdict", "suite-error")
    timing = record.get("timing") or {}
    throughput = record.get("throughput") or {}
    shares = {k: throughput[f"{k}_share"] for k in ("bandwidth", "compute") if throughput.get(f"{k}_share") is not None}
    roof_of = max(shares, key=shares.get) if shares else None
    row = {
        "name": name, "problem": record.get("problem"), "kernel": record.get("kernel"),
        "verdict": verdict, "correct": _correct(verdict), "compiled": verdict not in COMPILE_FAILURES,
        "message": _first_line(record.get("message", "")),
        "median_ms": timing.get("median_ms"),
        "eager_ms": (record.get("eager") or {}).get("median_ms"),
        "compile_ms": (record.get("torch_compile") or {}).get("median_ms"),
        "speedup_eager": record.get("speedup_vs_eager"), "speedup_compile": record.get("speedup_vs_compile"),
        "roofline": shares.get(roof_of) if roof_of else None, "roofline_of": roof_of,
        "mismatch": (record.get("mismatch") or {}).get("pattern"),
        "gpu_name": (record.get("environment") or {}).get("gpu"),
        "seconds": float(record.get("seconds") or 0.0), "record": record.get("record"),
        "gpu": record.get("gpu"), "retried": bool(record.get("retried")),
    }
    row.update(profile_fields(profile))
    return row


def profile_fields(profile: dict | None) -> dict:
    """Bottleneck from a profile record: the roofline class and the Speed-of-Light verdict, with the top signal."""
    if not profile:
        return {"bottleneck": None}
    if profile.get("verdict") != "profiled":
        note = f"{profile.get('verdict')}: {_first_line(profile.get('message', ''))}"
        return {"bottleneck": None, "profile_note": note,
                "profile_seconds": float(profile.get("seconds") or 0.0)}
    c = profile.get("classification") or {}
    signals = [s.get("name") for s in profile.get("signals") or [] if s.get("name")]
    bound = c.get("roofline_bound") or c.get("bound")
    share = c.get("share_of_peak")
    text = f"{bound}-bound" + (f" ({share:.0%} of peak)" if isinstance(share, (int, float)) else "")
    if signals:
        text += f"; {signals[0]}"
    return {"bottleneck": text, "profile_summary": c.get("summary") or profile.get("message"),
            "profile_seconds": float(profile.get("seconds") or 0.0), "profile_record": profile.get("record")}


def agent_fields(outcomes: list, final_text_found: bool) -> dict:
    """Figures of the agent's steps (agent.loop.Outcome objects): rounds to the first correct version, LLM use."""
    rounds_to_correct, rounds = None, 0
    calls = prompt = completion = 0
    reported = 0.0
    for step, out in outcomes:
        usage = out.usage
        reported += getattr(usage, "cost_usd", 0.0)
        calls += usage.calls
        prompt += usage.prompt_tokens
        completion += usage.completion_tokens
        if step == "generate":
            rounds += len(out.rounds)
            if out.ok:
                rounds_to_correct = rounds
    return {"rounds_to_correct": rounds_to_correct, "generate_rounds": rounds, "llm_calls": calls,
            "prompt_tokens": prompt, "completion_tokens": completion, "reported_cost_usd": reported or None,
            "optimize_steps_kept": sum(1 for step, out in outcomes if step == "optimize" and out.ok),
            "kernel_written": final_text_found}


def last_agent_verdict(outcomes: list) -> tuple[str, str]:
    """For a problem the agent never got right: the verdict of its last verified attempt and what it said."""
    for _, out in reversed(outcomes):
        for r in reversed(out.rounds):
            if r.get("verdict") not in (None, "llm-error", "patch-rejected"):
                return _agent_verdict(r["verdict"]), _first_line(r.get("message", ""))
        if out.message:
            return "no-kernel", _first_line(out.message)
    return "no-kernel", "the agent produced no kernel"


def _agent_verdict(v: str) -> str:
    return "check-failed" if v == "check-failed" else v


def placeholder(name: str, problem: str, verdict: str, message: str, **extra) -> dict:
    """A row with no run record behind it (no kernel found, the suite itself failed)."""
    return {"name": name, "problem": problem, "kernel": extra.pop("kernel", None), "verdict": verdict,
            "correct": _correct(verdict), "compiled": verdict not in COMPILE_FAILURES, "message": message,
            "median_ms": None, "speedup_eager": None, "speedup_compile": None, "roofline": None, "bottleneck": None,
            "seconds": 0.0, **extra}


def worker_died(reply: dict) -> bool:
    """The worker's reply when its process died under a job (harness/worker.py): retried once on a fresh one."""
    return reply.get("verdict") == "crashed"


def _correct(verdict: str) -> bool | None:
    return None if verdict in UNKNOWN else verdict == "pass"


def _first_line(text: str, limit: int = 300) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def gpu_seconds(record: dict | None) -> float:
    """Time a job held its GPU worker (the backend adds it to the reply; the record keeps the reply's fields)."""
    if not record:
        return 0.0
    return float(record.get("gpu_seconds") or 0.0)


def profile_record(reply: dict) -> dict | None:
    """The profile record inside a GPU worker's reply to a profile request (None when the worker failed)."""
    return reply.get("profile_record")


def queue_seconds(record: dict | None) -> float:
    """Time a job waited for a free GPU worker."""
    return float((record or {}).get("queue_seconds") or 0.0)
