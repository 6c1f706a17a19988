"""Tune (no LLM): sweep the declared tunable constants, build the variants in parallel, verify and
time each on the GPU, propose the fastest correct one if it beats the current value beyond noise.

A tunable is declared with a comment on the line of a constexpr or a template parameter default:

    constexpr int kBlockThreads = 64;  // cutegen: tunable 64,128,256,512
    template <int kVec = 4>            // cutegen: tunable kVec=1,2,4,8

Without values, powers of two from a quarter to four times the current value are tried (capped
at 1024 for thread/block counts).
"""

from __future__ import annotations

import itertools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cutegen.agent.agent import Proposal
from cutegen.agent.patch import unified
from cutegen.agent.candidates import NOISE_FLOOR, Verifier
from cutegen.compile import Tier

MAX_VARIANTS = 32
_MARKER = re.compile(r"//\s*cutegen:\s*tunable\b(?P<spec>[^\n]*)")
_ASSIGN = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\d+)\b")


@dataclass
class Tunable:
    name: str
    line: int  # 0-based
    value: int
    values: list[int]
    span: tuple[int, int]  # the value's characters on that line


@dataclass
class Variant:
    assignment: dict[str, int]
    text: str
    built: bool = False
    build_error: str = ""
    verdict: str = ""
    message: str = ""
    median_ms: float | None = None
    spread: float | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "text"}


@dataclass
class TuneResult:
    ok: bool
    message: str
    tunables: list[Tunable] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    proposal: Proposal | None = None

    def to_json(self) -> dict:
        return {"ok": self.ok, "message": self.message, "tunables": [t.__dict__ for t in self.tunables],
                "variants": [v.to_json() for v in self.variants],
                "proposal": self.proposal.to_json() if self.proposal else None}


def find_tunables(text: str) -> list[Tunable]:
    found = []
    for i, line in enumerate(text.splitlines()):
        m = _MARKER.search(line)
        if not m:
            continue
        code = line[:m.start()]
        spec = m.group("spec").strip()
        named = re.match(r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<vals>[\d,\s]+)$", spec)
        assigns = list(_ASSIGN.finditer(code))
        if named:
            assigns = [a for a in assigns if a.group("name") == named.group("name")]
            spec = named.group("vals")
        if not assigns:
            continue
        a = assigns[-1]  # `constexpr int kX = 64;` has one; a template line names its parameter in the spec
        value = int(a.group("value"))
        values = sorted({int(v) for v in re.findall(r"\d+", spec)}) or _around(a.group("name"), value)
        if value not in values:
            values = sorted({*values, value})
        found.append(Tunable(a.group("name"), i, value, values, a.span("value")))
    return found


def _around(name: str, value: int) -> list[int]:
    cap = 1024 if re.search(r"thread|block|warp|cta", name, re.I) else 1 << 20
    return sorted({v for v in (value // 4, value // 2, value, value * 2, value * 4) if 1 <= v <= cap})


def variants(text: str, tunables: list[Tunable]) -> list[Variant]:
    lines = text.splitlines(keepends=True)
    out = []
    for combo in itertools.product(*[t.values for t in tunables]):
        new = list(lines)
        for t, v in zip(tunables, combo):
            line = new[t.line]
            new[t.line] = line[:t.span[0]] + str(v) + line[t.span[1]:]
        out.append(Variant({t.name: v for t, v in zip(tunables, combo)}, "".join(new)))
        if len(out) >= MAX_VARIANTS:
            break
    return out


def tune(kernel: Path, text: str, verifier: Verifier, *, parallel: int | None = None, on_stage=None) -> TuneResult:
    kernel = Path(kernel).resolve()
    stage = on_stage or (lambda s: None)
    tunables = find_tunables(text)
    if not tunables:
        return TuneResult(False, f"{kernel.name} declares no tunables (add `// cutegen: tunable 64,128,256` "
                                 "after a constexpr or template parameter)")
    current = {t.name: t.value for t in tunables}
    vs = variants(text, tunables)
    combos = 1
    for t in tunables:
        combos *= len(t.values)
    capped = f" (the first {MAX_VARIANTS} of {combos} combinations)" if combos > MAX_VARIANTS else ""
    if current not in [v.assignment for v in vs]:
        vs.insert(0, Variant(current, text))
    stage(f"building {len(vs)} variants")
    shadows = [verifier.shadow(kernel, v.text) for v in vs]
    # nvcc is CPU-bound: one compile per two cores keeps each at full speed.
    workers = parallel or max(1, (os.cpu_count() or 2) // 2)
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda sb: sb[1].run(Tier.BUILD, sb[0], job=f"tune:{sb[0]}"), shadows))
    for v, r in zip(vs, results):
        v.built = r.ok
        if not r.ok:
            v.build_error = r.errors[0].message if r.errors else "does not build"
    result = TuneResult(False, "", tunables, vs)
    try:
        return _measure(kernel, text, verifier, result, shadows, current, stage)
    finally:
        result.message += capped


def _measure(kernel, text, verifier, result, shadows, current, stage) -> TuneResult:
    vs = result.variants
    built = [v for v in vs if v.built]
    problem = verifier.problem_for(kernel)
    if not built:
        result.message = "no variant builds"
        return result
    if problem is None or not verifier.gpu:
        why = f"no problem paired with {kernel.name}" if problem is None else "no GPU on this machine"
        result.message = f"built {len(built)} of {len(vs)} variants; not run: {why}, so no fastest one can be named"
        return result
    from cutegen.harness.run import verify_kernel

    worker, note = verifier.candidate_worker(problem)  # variants are candidates: they run jailed
    if worker is None:
        result.message = f"built {len(built)} of {len(vs)} variants; not run: {note}, so no fastest one can be named"
        return result
    for v, (shadow, builder) in zip(vs, shadows):
        if not v.built or verifier.cancel_event.is_set():
            continue
        stage(f"timing {_name(v.assignment)}")
        rec = verify_kernel(shadow, builder, worker, problem=problem, trials=verifier.trials, timing=True,
                            state_dir=verifier.state_dir)
        v.verdict, v.message = rec.verdict, rec.message
        if rec.passed and rec.timing is not None:
            v.median_ms, v.spread = rec.timing.median_ms, rec.timing.spread
    result = _choose(kernel, text, result, current)
    if note:
        result.message += f" ({note})"
    return result


def _choose(kernel: Path, text: str, result: TuneResult, current: dict) -> TuneResult:
    timed = [v for v in result.variants if v.median_ms is not None]
    base = next((v for v in timed if v.assignment == current), None)
    if not timed:
        result.message = "no variant passed its test"
        return result
    best = min(timed, key=lambda v: v.median_ms)
    table = ", ".join(f"{_name(v.assignment)}: {v.median_ms:.3f} ms" for v in sorted(timed, key=lambda v: v.median_ms))
    if base is None:
        result.message = f"the current values did not pass, so nothing is compared; measured: {table}"
        return result
    speedup = base.median_ms / best.median_ms
    noise = max(NOISE_FLOOR, base.spread or 0.0, best.spread or 0.0)
    if best is base or speedup <= 1 + noise:
        result.ok, result.message = True, f"the current values are the fastest within noise (±{noise:.0%}): {table}"
        return result
    label = (f"{_name(best.assignment)} · correct · {speedup:.2f}× faster than {_name(current)} "
             f"({base.median_ms:.3f} → {best.median_ms:.3f} ms)")
    figures = {"speedup": round(speedup, 4), "noise": round(noise, 4), "median_ms": best.median_ms,
               "baseline_ms": base.median_ms, "assignment": best.assignment, "variants": [v.to_json() for v in timed]}
    result.ok, result.message = True, f"{label}; measured: {table}"
    result.proposal = Proposal(str(kernel), text, best.text, unified(text, best.text, kernel.name), label,
                               f"{speedup:.2f}× faster, correct", figures, "tune")
    return result


def _name(assignment: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in assignment.items())
