"""Run record → suite row: the ONE module of the suite that reads run records (cutegen.records.RunRecord, typed)
and the worker's replies. A row is a flat JSON object, one line of results.jsonl: what the report's tables and
plots need, nothing nested."""

from __future__ import annotations

from cutegen.agent.verdicts import CandidateVerdict, RoundVerdict
from cutegen.harness import intervals
from cutegen.harness.verdicts import NOT_JUDGED, Verdict
from cutegen.records import RunRecord

COMPILE_FAILURES = (Verdict.BUILD_FAILED, CandidateVerdict.CHECK_FAILED)
# Neither correct nor incorrect: what the harness did not judge (its vocabulary), and the suite's own outcomes.
UNKNOWN = frozenset({*(v.value for v in NOT_JUDGED), "no-kernel", "suite-error"})


def from_record(name: str, record: RunRecord, profile: RunRecord | None = None) -> dict:
    """The row for a test/bench record (and optionally a profile record of the same kernel)."""
    verdict = record.verdict or "suite-error"
    d = record.details
    share = record.throughput.peak_share() if record.throughput else None
    row = {
        "name": name, "problem": d.get("problem"), "kernel": d.get("kernel"),
        "verdict": verdict, "correct": _correct(verdict), "compiled": verdict not in COMPILE_FAILURES,
        "message": _first_line(record.message),
        "median_ms": record.timing.median_ms if record.timing else None,
        "eager_ms": _median(record, "eager"), "compile_ms": _median(record, "torch_compile"),
        "speedup_eager": record.speedup("eager"), "speedup_compile": record.speedup("torch_compile"),
        **_interval(record, "eager", "speedup_eager"), **_interval(record, "torch_compile", "speedup_compile"),
        "roofline": share[0] if share else None, "roofline_of": share[1] if share else None,
        "mismatch": record.mismatch.pattern if record.mismatch else None,
        "gpu_name": (d.get("environment") or {}).get("gpu"),
        "seconds": float(record.seconds or 0.0), "record": record.path,
        "gpu": d.get("gpu"), "retried": bool(d.get("retried")),
    }
    row.update(profile_fields(profile))
    row.update(accuracy_fields(record))
    return row


def _interval(record: RunRecord, baseline: str, key: str) -> dict:
    """The speedup's 95 % interval (from the interleaved rounds) and whether it holds 1.0."""
    interval = record.speedup_interval(baseline)
    if interval is None:
        return {f"{key}_low": None, f"{key}_high": None, f"{key}_within_noise": None}
    low, high = interval
    return {f"{key}_low": low, f"{key}_high": high, f"{key}_within_noise": intervals.within_noise(low, high)}


def accuracy_fields(record: RunRecord) -> dict:
    """The errors the verdict was judged on, in tolerance units: the kernel's, and the fp32 reference's own
    against the fp64 truth (harness/truth.py)."""
    a = record.accuracy
    if a is None:
        return {"truth": None, "kernel_error": None, "reference_error": None}
    return {"truth": a.truth, "kernel_error": a.kernel_error, "reference_error": a.reference_error}


def _median(record: RunRecord, baseline: str) -> float | None:
    t = record.baselines.get(baseline)
    return t.median_ms if t else None


def profile_fields(profile: RunRecord | None) -> dict:
    """Bottleneck from a profile record: the roofline class and the share of peak, with the top signal."""
    if profile is None:
        return {"bottleneck": None}
    if profile.profile is None:
        return {"bottleneck": None, "profile_note": f"{profile.verdict}: {_first_line(profile.message)}",
                "profile_seconds": float(profile.seconds or 0.0)}
    p = profile.profile
    text = f"{p.bound}-bound" + (f" ({p.share_of_peak:.0%} of peak)" if isinstance(p.share_of_peak, float) else "")
    if p.signals:
        text += f"; {p.signals[0]}"
    return {"bottleneck": text, "profile_summary": p.summary, "profile_seconds": float(profile.seconds or 0.0),
            "profile_record": profile.path}


def agent_fields(outcomes: list, final_text_found: bool) -> dict:
    """Figures of the agent's steps (agent.agent.AgentResult objects): rounds to the first correct version, LLM use."""
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
            "optimize_steps_kept": sum(1 for step, out in outcomes if step in ("optimize", "search") and out.ok),
            "kernel_written": final_text_found}


def search_fields(outcomes: list, tree) -> dict:
    """A suite search's answer (agent.search): the best verified version, its ratio against the generated kernel
    with the judge's noise (the direct comparison where it is several changes away), the changes that made it, and
    the tree's size. `tree`: the kernel's agent.tree.VersionTree, as the search left it."""
    last = tree.searches[-1] if tree.searches else {}
    best = tree.nodes.get(last.get("best") or "")
    out = next(o for step, o in reversed(outcomes) if step == "search")
    figures = out.proposal.figures if out.ok and out.proposal else {}
    # the gain is by the search's objective (time, energy or edp) against the start; `speedup` is time's alone
    gain = figures.get("gain", figures.get("speedup"))
    ratio = gain if best is not None else None
    return {"search_shape": last.get("shape"), "search_tree_size": len(tree.nodes),
            "search_failures": len(tree.failures), "search_candidates": last.get("candidates"),
            "search_steps": last.get("steps"), "search_stop": last.get("stop"),
            "search_best": best.id if best is not None else None,
            "search_change": " → ".join(n.change for n in tree.chain(best.id) if n.change) if best else None,
            "search_ratio": ratio if isinstance(ratio, (int, float)) else None,
            "search_objective": figures.get("objective") or tree.objective,
            "search_noise": figures.get("noise") if isinstance(ratio, (int, float)) else None,
            "search_message": _first_line(out.message)}


def last_agent_verdict(outcomes: list) -> tuple[str, str]:
    """For a problem the agent never got right: the verdict of its last verified attempt and what it said."""
    for _, out in reversed(outcomes):
        for r in reversed(out.rounds):
            if r.get("verdict") not in (None, RoundVerdict.LLM_ERROR, RoundVerdict.PATCH_REJECTED):
                return r["verdict"], _first_line(r.get("message", ""))
        if out.message:
            return "no-kernel", _first_line(out.message)
    return "no-kernel", "the agent produced no kernel"


def placeholder(name: str, problem: str, verdict: str, message: str, **extra) -> dict:
    """A row with no run record behind it (no kernel found, the suite itself failed)."""
    return {"name": name, "problem": problem, "kernel": extra.pop("kernel", None), "verdict": verdict,
            "correct": _correct(verdict), "compiled": verdict not in COMPILE_FAILURES, "message": message,
            "median_ms": None, "speedup_eager": None, "speedup_compile": None, "roofline": None, "bottleneck": None,
            "seconds": 0.0, **extra}


def worker_died(reply: dict) -> bool:
    """The worker's reply when its process died under a job (harness/worker.py): retried once on a fresh one."""
    return reply.get("verdict") == Verdict.CRASHED


def _correct(verdict: str) -> bool | None:
    return None if verdict in UNKNOWN else verdict == Verdict.PASS


def _first_line(text: str, limit: int = 300) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def gpu_seconds(reply: RunRecord | dict | None) -> float:
    """Time a job held its GPU worker (the backend adds it to the reply; a record keeps it in its details)."""
    return float(_reply_field(reply, "gpu_seconds") or 0.0)


def profile_record(reply: dict) -> RunRecord | None:
    """The profile record inside a GPU worker's reply to a profile request (None when the worker failed)."""
    payload = reply.get("profile_record")
    return RunRecord.from_message(payload) if isinstance(payload, dict) else None


def queue_seconds(reply: RunRecord | dict | None) -> float:
    """Time a job waited for a free GPU worker."""
    return float(_reply_field(reply, "queue_seconds") or 0.0)


def _reply_field(reply: RunRecord | dict | None, key: str):
    if reply is None:
        return None
    return (reply.details if isinstance(reply, RunRecord) else reply).get(key)
