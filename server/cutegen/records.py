"""Run records: one JSON file per action under `.cutegen/runs/`, the single source of what the editor shows.

Typed (RunRecord and its parts) and versioned. Every record is written and read here; producers (the harness,
the profiler, the sanitizer, the checker, the agent) hand `write` or a `Recorder` the payload they built and get
the typed record back, and every presenter (CodeLens, hover, the
status bar through the command reply, the CLI) shows `RunRecord.summary()`, so the same run reads the same
everywhere.

Schema 1 (cutegen ≤ 0.1) stored the producer's payload as is; it is still read (`from_payload` is the one
place that knows its layout). A record of any other schema is shown as a note asking for a new run.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from cutegen.files import write_atomic
from cutegen.hardware import H200
from cutegen.harness import intervals
from cutegen.harness.verdicts import Mismatch, Verdict, parse
from cutegen.model import CheckResult, Diagnostic, Location
from cutegen.profiler.signals import ProfileVerdict, SanitizeVerdict
from cutegen.state import StateDir, stamp

SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)


class RunKind(str, Enum):
    CHECK = "check"
    BUILD = "build"
    TEST = "test"
    BENCH = "bench"
    PROFILE = "profile"
    SANITIZE = "sanitize"
    DIAGNOSE = "diagnose"


BASELINE_LABELS = {"eager": "eager", "torch_compile": "torch.compile"}  # record key → how a summary names it


@dataclass
class Timing:
    """A timed function's CUDA-event times over its trials (harness/timing.py measures them). Records from
    before interleaved blocks (cutegen <= 0.2) have no interval fields: their ratios are shown without one."""

    median_ms: float
    p10_ms: float
    p90_ms: float
    spread: float  # (p90 - p10) / median
    trials: int  # calls timed
    low_ms: float | None = None  # 95 % interval of the median (intervals.median_interval over the rounds)
    high_ms: float | None = None
    calls_per_block: int | None = None  # back-to-back calls per round, each after its own L2 flush
    block_ms: list[float] = field(default_factory=list)  # per round, the median call: pairs with other functions'

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Energy:
    """The kernel's energy per call, from NVML's total-energy counter in windows of back-to-back calls
    (harness/energy.py measures it; docs/energy.md says what it holds). Stored in the record's `details` under
    "energy" (older readers ignore it; older records have none): why it is absent, when it is, under
    "energy_unmeasured", one line for a person."""

    j_per_call: float  # median over the windows
    low_j: float  # 95 % interval of that median (intervals.median_interval over the windows)
    high_j: float
    watts: float  # mean board power over the windows (the counter's energy over its own span)
    sm_mhz: float | None  # mean SM clock sampled during the windows
    windows: int
    call_ms: float  # GPU time per call in the windows, hand-off included (no L2 flush between calls)
    period_ms: float  # the counter's update period, measured at run time
    sampled_watts: float | None = None  # nvmlDeviceGetPowerUsage's mean: a cross-check, averaged by the driver

    @property
    def spread(self) -> float:
        """The interval's width over the median: the energy objective's noise (agent/objective.py)."""
        return (self.high_j - self.low_j) / self.j_per_call if self.j_per_call else 0.0

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Energy | None":
        """None for a payload this version cannot read (a newer layout): the figure is left out, not guessed."""
        known = {f for f in cls.__dataclass_fields__}
        try:
            return cls(**{k: v for k, v in d.items() if k in known})
        except TypeError:
            return None


def joules_text(j: float) -> str:
    """'1.21 J', '58.3 mJ', '412 µJ': three significant figures in the unit that reads best."""
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ")):
        if abs(j) >= scale or unit == "µJ":
            return f"{_ms(j / scale)} {unit}"
    return f"{j} J"


@dataclass
class Accuracy:
    """How far the outputs were from the truth they were judged against (harness/truth.py), in units of the
    tolerance (atol + rtol·|truth|, worst element; <= 1 is within tolerance), the worst trial's."""

    truth: str  # "fp64" (the reference evaluated in float64) or "fp32" (the problem's own eager reference)
    mode: str  # the reference mode setting: "fp64" or "kernelbench"
    atol: float
    rtol: float
    kernel_error: float | None = None
    reference_error: float | None = None  # the fp32 eager reference's own, against the fp64 truth
    note: str = ""  # why the truth is not fp64 where it could have been

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Throughput:
    """Achieved rates and their share of the ceilings of the GPU that ran them (hardware.py)."""

    bytes: int
    gb_per_s: float
    bandwidth_share: float | None = None
    gpu: str | None = None  # the hardware table's row, e.g. "H200"
    ceiling_source: str | None = None  # "measured" or "datasheet"
    bandwidth_ceiling: float | None = None  # bytes/s
    flops: int | None = None
    tflop_per_s: float | None = None
    compute_share: float | None = None
    compute_ceiling: float | None = None
    math: str | None = None  # the output dtype whose matrix-product peak `compute_share` is of

    def peak_share(self) -> tuple[float, str] | None:
        """The larger of the two shares and what it is of: (0.96, "HBM peak") or (0.59, "bf16 peak")."""
        compute = f"{MATH_NAMES.get(self.math or '', 'compute')} peak"
        shares = [(s, what) for s, what in ((self.bandwidth_share, "HBM peak"), (self.compute_share, compute))
                  if isinstance(s, (int, float))]
        return max(shares) if shares else None

    @classmethod
    def from_schema1(cls, d: dict) -> "Throughput":
        """Schema 1 divided by the H200's measured ceilings, typed into timing.py then, without saying so."""
        t = cls(**d)
        if t.bandwidth_share is not None and t.gpu is None:
            t.gpu, t.ceiling_source, t.bandwidth_ceiling = H200.name, H200.source, H200.copy_bandwidth
        return t


MATH_NAMES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "tf32": "tf32"}


@dataclass
class BuildFigures:
    """The library build a test or bench ran (harness/run.py). Stored in the record's `details` as the harness wrote
    it (schema 2 keeps it there, so today's readers read it), read typed here."""

    ok: bool
    seconds: float | None = None
    cached: bool = False
    log: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)  # the check tier's first for a ModelNew
    resources: list[dict] = field(default_factory=list)  # ptxas's per-kernel figures (model.KernelResources)
    worker_diagnostics: list[Diagnostic] = field(default_factory=list)  # what load_inline's own text said
    check: dict | None = None  # the check compile that explained a failed load_inline: seconds, cached

    @classmethod
    def from_json(cls, d: dict) -> "BuildFigures":
        return cls(ok=bool(d.get("ok")), seconds=d.get("seconds"), cached=bool(d.get("cached")), log=d.get("log") or "",
                   diagnostics=[Diagnostic.from_json(x) for x in d.get("diagnostics") or []],
                   resources=list(d.get("resources") or []),
                   worker_diagnostics=[Diagnostic.from_json(x) for x in d.get("worker_diagnostics") or []],
                   check=d.get("check"))


def _evidence(signals: list[dict]) -> dict[str, str]:
    """signal → evidence, from the [{'name', 'evidence'}] list classify.summarize and schema 1 store."""
    return {s["name"]: s.get("evidence", "") for s in signals}


@dataclass
class ProfileFigures:
    """What Nsight Compute's run was classified as (profiler/classify.py).

    `classification` and `evidence` are stored in the record's `details` (as `classification` and `signals`,
    schema 1's layout), not under `profile`: a reader of cutegen <= 0.3 builds ProfileFigures from the six
    fields before them and would refuse a record with more (to_json / from_json move them)."""

    bound: str
    summary: str  # "memory-bound at 92% of achievable DRAM bandwidth (...)"
    signals: list[str] = field(default_factory=list)  # profiler.signals.Signal values, in the order raised
    share_of_peak: float | None = None
    gpu: str | None = None
    report: str | None = None  # the .ncu-rep file
    classification: dict = field(default_factory=dict)  # classify.summarize's figures: sol, sm_pct, roofline, ...
    evidence: dict[str, str] = field(default_factory=dict)  # signal → what triggered it (empty in older records)

    def signal_evidence(self) -> list[dict]:
        """[{'name', 'evidence'}] in the order raised: what the knowledge base's search and the agent read."""
        return [{"name": s, "evidence": self.evidence.get(s, "")} for s in self.signals]

    @classmethod
    def from_classification(cls, c: dict, signals: list[dict], report: str | None) -> "ProfileFigures":
        """From classify.summarize's result (its `signals` apart: [{'name', 'evidence'}])."""
        return cls(bound=c.get("bound", ""), summary=c.get("summary", ""), signals=[s["name"] for s in signals],
                   share_of_peak=c.get("share_of_peak"), gpu=c.get("gpu"), report=report,
                   classification={k: v for k, v in c.items() if k != "signals"},
                   evidence=_evidence(signals))

    @classmethod
    def from_json(cls, d: dict, details: dict) -> "ProfileFigures":
        """A schema-2 `profile`, with its figures taken out of `details` (records of cutegen <= 0.3 lack them)."""
        figures = cls(**d)
        figures.classification = dict(details.pop("classification", None) or {})
        figures.evidence = _evidence(details.pop("signals", None) or [])
        return figures


@dataclass
class HotLine:
    """One line of the user's source with the profile samples charged to it (profiler/lines.py): samples of
    inlined CuTe header code count for the user line that called it."""

    file: str
    line: int  # 1-based
    samples: int  # warp-state samples (all reasons)
    share: float  # of all the kernels' samples
    stalls: dict[str, int] = field(default_factory=dict)  # stall reason (profiler/stalls.py) → samples, largest first
    executed: int = 0  # warp-level instructions executed
    excess_sectors: int = 0  # L2 global sectors beyond the ideal: uncoalesced accesses
    excess_wavefronts: int = 0  # shared-memory wavefronts beyond the ideal: bank conflicts
    markers: list[str] = field(default_factory=list)  # Nsight Compute's rule messages placed on this line
    sass: list[str] = field(default_factory=list)  # its hottest SASS instructions, in address order
    text: str = ""  # the line as it was when profiled

    def top_stalls(self, n: int = 3) -> list[tuple[str, int]]:
        """The reasons worth acting on, largest first (issued and not-selected samples are not stalls)."""
        from cutegen.profiler.stalls import NOT_A_PROBLEM

        return [(r, c) for r, c in sorted(self.stalls.items(), key=lambda kv: -kv[1]) if r not in NOT_A_PROBLEM][:n]

    def label(self) -> str:
        """'31 % · mio_throttle': what the editor writes at the line's end."""
        top = self.top_stalls(1)
        return f"{self.share * 100:.0f} %" + (f" · {top[0][0]}" if top else "")


@dataclass
class LineProfile:
    """Where a kernel's time goes, line by line: the hot lines of the user's files, hottest first."""

    lines: list[HotLine] = field(default_factory=list)
    total_samples: int = 0
    user_samples: int = 0  # the samples placed on user lines
    innermost_samples: int = 0  # those Nsight's own innermost place alone would have put on user lines
    attribution: str = "inlined-at"  # "inlined-at" (the line table's inline chains) or "innermost" (Nsight's own place)
    digests: dict[str, str] = field(default_factory=dict)  # file → digest of its text when profiled (text_digest)
    kernels: list[str] = field(default_factory=list)
    note: str = ""  # why attribution fell back, if it did

    @property
    def user_share(self) -> float:
        return self.user_samples / self.total_samples if self.total_samples else 0.0

    def hottest(self, n: int = 5, file: str | None = None) -> list[HotLine]:
        return [h for h in self.lines if file is None or h.file == file][:n]

    def stale(self, file: str, text: str) -> bool:
        """Whether `file` changed since the profile (then its lines must not be shown against today's text)."""
        return self.digests.get(file) != text_digest(text)

    def summary(self) -> str:
        top = self.lines[0] if self.lines else None
        where = f"hottest line {top.line} ({top.label()})" if top else "no samples on user lines"
        return f"{where} · {self.user_share * 100:.0f} % of samples on user lines"

    @classmethod
    def from_json(cls, d: dict) -> "LineProfile":
        d = dict(d)
        d["lines"] = [HotLine(**h) for h in d.get("lines", [])]
        return cls(**d)


@dataclass
class SanitizerFinding:
    """One error compute-sanitizer reported, placed at a user line (profiler/sanitizer.py): the same error
    from many threads is one finding with a count."""

    tool: str  # memcheck, racecheck, initcheck, synccheck
    message: str  # "Invalid __global__ write of size 4 bytes"
    file: str
    line: int
    kernel: str = ""
    count: int = 1  # reports of this error at this line
    threads: list[str] = field(default_factory=list)  # the first few, "(0,0,0) in block (0,0,0)"
    addresses: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # the report's other lines (how far out of bounds, the hazard)
    frames: list[Location] = field(default_factory=list)  # the header places walked out of, innermost first

    @classmethod
    def from_json(cls, d: dict) -> "SanitizerFinding":
        d = dict(d)
        d["frames"] = [Location(**f) for f in d.get("frames", [])]
        return cls(**d)


@dataclass
class SanitizerReport:
    """compute-sanitizer's four tools on one call of the kernel."""

    findings: list[SanitizerFinding] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)  # tool → errors in its ERROR SUMMARY
    unplaced: list[str] = field(default_factory=list)  # errors with no user line (host API errors, header kernels)
    digests: dict[str, str] = field(default_factory=dict)  # file → digest of its text when run

    def summary(self) -> str:
        errors = sum(self.tools.values())
        if not errors:
            return f"no errors ({', '.join(self.tools)})"
        per_tool = ", ".join(f"{t} {n}" for t, n in self.tools.items() if n)
        lines = sorted({f.line for f in self.findings})
        at = f" at line{'s' * (len(lines) > 1)} {', '.join(map(str, lines[:6]))}" if lines else ""
        return f"{errors} error{'s' * (errors != 1)} ({per_tool}){at}"

    @classmethod
    def from_json(cls, d: dict) -> "SanitizerReport":
        d = dict(d)
        d["findings"] = [SanitizerFinding.from_json(f) for f in d.get("findings", [])]
        return cls(**d)


@dataclass
class RunRecord:
    kind: str  # a RunKind value
    file: str  # the source file the run was about
    verdict: str  # a harness Verdict, a ProfileVerdict, or for a check "ok" / "errors"
    message: str = ""
    time: float = 0.0  # when it was written (epoch seconds)
    seconds: float | None = None  # how long the action took
    timing: Timing | None = None  # the kernel's (bench)
    baselines: dict[str, Timing] = field(default_factory=dict)  # "eager", "torch_compile", timed in the same run
    throughput: Throughput | None = None
    mismatch: Mismatch | None = None
    accuracy: Accuracy | None = None
    suspicious: str | None = None
    profile: ProfileFigures | None = None
    check: CheckResult | None = None
    lines: LineProfile | None = None  # a profile's per-line figures
    sanitizer: SanitizerReport | None = None
    details: dict = field(default_factory=dict)  # the rest of the producer's payload: environment, build, metrics
    schema: int = SCHEMA_VERSION
    note: str = ""  # why the record could not be read in full (another schema, a damaged file)
    path: str | None = None  # where it is stored (not serialized)
    save_error: str | None = None  # why it could not be stored (a full disk: files.py); not serialized

    def __post_init__(self) -> None:
        # Producers name verdicts by their enum (Verdict, ProfileVerdict, SanitizeVerdict); the record holds the
        # value, one str type for the three vocabularies and a check's "ok"/"errors", as the JSON does. (A str
        # Enum member formats as "Verdict.PASS" in an f-string on Python 3.11: the value is what a user reads.)
        self.verdict = str(getattr(self.verdict, "value", self.verdict))

    @property
    def harness_verdict(self) -> Verdict | None:
        """The verdict as the harness's enum; None for a profile's, a sanitizer's or a check's."""
        return parse(self.verdict)

    @property
    def kernel(self) -> str:
        """The kernel file the harness ran (the producer's `kernel`; `file` for records without it)."""
        return str(self.details.get("kernel") or self.file)

    @property
    def problem(self) -> str | None:
        """The problem file it was judged against (None when none was paired)."""
        return self.details.get("problem")

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """A sanitizer run's findings as editor diagnostics (profiler/sanitizer.py): in `details`, as written."""
        return [Diagnostic.from_json(d) for d in self.details.get("diagnostics") or []]

    @property
    def build(self) -> BuildFigures | None:
        """The kernel library's build (None where the run built nothing: no problem, a profile of the reference)."""
        build = self.details.get("build")
        return BuildFigures.from_json(build) if isinstance(build, dict) else None

    # -- figures ------------------------------------------------------------------------------

    @property
    def energy(self) -> Energy | None:
        """The kernel's J/call (a bench's), where NVML measured it; None for older records and unmeasured runs."""
        e = self.details.get("energy")
        return Energy.from_json(e) if isinstance(e, dict) else None

    @property
    def energy_unmeasured(self) -> str | None:
        """Why a timed run has no energy figure: 'energy not measured: ...' (harness/energy.py), else None."""
        why = self.details.get("energy_unmeasured")
        return why if isinstance(why, str) and why else None

    def energy_text(self) -> str | None:
        """The energy in full for the CLI and the hover: 'energy 58.3 mJ/call [57.9 mJ–58.8 mJ] · 612 W · SM 1980
        MHz · 5 windows, counter updated every 20 ms'; the one-line reason where it was not measured; None for a
        record with neither (older records, runs that were not timed)."""
        e = self.energy
        if e is None:
            return self.energy_unmeasured
        clock = f" · SM {e.sm_mhz:.0f} MHz" if e.sm_mhz else ""
        return (f"energy {joules_text(e.j_per_call)}/call [{joules_text(e.low_j)}–{joules_text(e.high_j)}] · "
                f"{e.watts:.0f} W{clock} · {e.windows} windows, counter updated every {e.period_ms:.3g} ms")


    def speedup(self, baseline: str) -> float | None:
        """The kernel's speedup over `baseline`: the median of the paired per-round ratios where the rounds were
        stored, else the ratio of the medians (older records)."""
        base = self.baselines.get(baseline)
        if base is None or self.timing is None or not self.timing.median_ms:
            return None
        paired = self._paired(base)
        return paired[0] if paired else base.median_ms / self.timing.median_ms

    def speedup_interval(self, baseline: str) -> tuple[float, float] | None:
        """The 95 % interval of that speedup, from the interleaved rounds; None for a record without them."""
        base = self.baselines.get(baseline)
        paired = self._paired(base) if base is not None and self.timing is not None else None
        return paired[1:] if paired else None

    def _paired(self, base: Timing) -> tuple[float, float, float] | None:
        if not base.block_ms or len(base.block_ms) != len(self.timing.block_ms):
            return None
        return intervals.ratio(base.block_ms, self.timing.block_ms)

    @property
    def passed(self) -> bool:
        return self.verdict in (Verdict.PASS.value, ProfileVerdict.PROFILED.value, SanitizeVerdict.CLEAN.value, "ok")

    @property
    def level(self) -> str:
        """How an editor shows the verdict: "ok", "info" (nothing was judged) or "error"."""
        if self.note:
            return "info"
        for vocabulary in (Verdict, ProfileVerdict, SanitizeVerdict):
            try:
                return vocabulary(self.verdict).level
            except ValueError:
                pass
        return "ok" if self.passed else "error"

    def summary(self) -> str:
        """The one line every presenter shows, e.g.
        'pass · 3.13 ms · 3.35× eager · 1.06× torch.compile · 96 % of HBM peak', 'mismatch · tail (…)'."""
        if self.note:
            return self.note
        parts = [self.verdict]
        if self.mismatch is not None:
            m = self.mismatch
            parts.append(m.pattern + (f" ({m.bad:,} of {m.total:,} wrong)" if m.total else ""))
        if self.timing is not None:
            parts.append(f"{_ms(self.timing.median_ms)} ms")
            energy = self.energy
            if energy is not None:
                parts.append(f"{joules_text(energy.j_per_call)}/call")
            for key, label in BASELINE_LABELS.items():
                ratio = self.speedup(key)
                if ratio is not None:
                    parts.append(self.ratio_text(key, label))
            share = self.throughput.peak_share() if self.throughput else None
            if share:
                parts.append(f"{share[0] * 100:.0f} % of {share[1]}")
        elif self.kind == RunKind.TEST and self.verdict == Verdict.PASS and "trials" in self.details:
            parts.append(f"{self.details['trials']} trials")
        if self.profile is not None:
            parts.append(self.profile.summary)
        if self.lines is not None:
            parts.append(self.lines.summary())
        if self.sanitizer is not None:
            parts.append(self.sanitizer.summary())
        if self.check is not None:
            errors = len(self.check.errors)
            parts = ["compiles" if self.check.ok else f"{errors} error{'s' * (errors != 1)}"]
        return " · ".join(parts)

    def ratio_text(self, baseline: str, label: str) -> str:
        """'3.35× eager [3.30–3.41]', or '≈ eager (within noise, 0.97–1.02×)' when the interval holds 1.0;
        '3.35× eager' for a record without rounds."""
        ratio, interval = self.speedup(baseline), self.speedup_interval(baseline)
        if interval is None:
            return f"{ratio:.2f}× {label}"
        low, high = interval
        if intervals.within_noise(low, high):
            return f"≈ {label} (within noise, {low:.2f}–{high:.2f}×)"
        return f"{ratio:.2f}× {label} [{low:.2f}–{high:.2f}]"

    # -- JSON ---------------------------------------------------------------------------------

    def to_json(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("path", "note", "save_error", "check", "mismatch")}
        d["check"] = self.check.to_json() if self.check else None
        d["mismatch"] = self.mismatch.to_json() if self.mismatch else None
        if self.accuracy is None:
            d.pop("accuracy")  # records without one stay byte-for-byte what they were
        if self.profile is not None:  # where today's and older readers both read them (ProfileFigures)
            d["profile"].pop("classification"), d["profile"].pop("evidence")
            d["details"] = {**d["details"], "classification": self.profile.classification,
                            "signals": self.profile.signal_evidence()}
        return d

    @classmethod
    def from_json(cls, d: dict) -> "RunRecord":
        """A schema-2 record."""
        d = dict(d)
        for unstored in ("path", "note", "save_error"):
            d.pop(unstored, None)
        d["timing"] = Timing(**d["timing"]) if d.get("timing") else None
        d["baselines"] = {k: Timing(**v) for k, v in (d.get("baselines") or {}).items()}
        d["throughput"] = Throughput(**d["throughput"]) if d.get("throughput") else None
        d["mismatch"] = Mismatch.from_json(d["mismatch"]) if d.get("mismatch") else None
        d["accuracy"] = Accuracy(**d["accuracy"]) if d.get("accuracy") else None
        d["details"] = dict(d.get("details") or {})
        d["profile"] = ProfileFigures.from_json(d["profile"], d["details"]) if d.get("profile") else None
        d["check"] = CheckResult.from_json(d["check"]) if d.get("check") else None
        d["lines"] = LineProfile.from_json(d["lines"]) if d.get("lines") else None
        d["sanitizer"] = SanitizerReport.from_json(d["sanitizer"]) if d.get("sanitizer") else None
        return cls(**d)

    @classmethod
    def from_payload(cls, kind: str, file: str, payload: dict) -> "RunRecord":
        """A record from what a producer hands `write` (the layout schema 1 stored on disk as is)."""
        rest = dict(payload)
        for key in ("schema", "kind", "file", "record", "summary", "level"):
            rest.pop(key, None)
        record = cls(kind=str(kind), file=str(file), verdict=str(rest.pop("verdict", "")),
                     message=str(rest.pop("message", "") or ""), time=float(rest.pop("time", time.time())),
                     seconds=rest.pop("seconds", None), suspicious=rest.pop("suspicious", None))
        if rest.get("timing"):
            record.timing = Timing(**rest.pop("timing"))
        for key in BASELINE_LABELS:
            if rest.get(key):
                record.baselines[key] = Timing(**rest.pop(key))
        for key in [k for k, v in rest.items() if v is None]:  # e.g. a profile without timing
            del rest[key]
        for key in ("speedup_vs_eager", "speedup_vs_compile"):  # derived from the timings
            rest.pop(key, None)
        if rest.get("accuracy"):
            record.accuracy = Accuracy(**rest.pop("accuracy"))
        if rest.get("throughput"):
            record.throughput = Throughput.from_schema1(rest.pop("throughput"))
        if rest.get("mismatch"):
            record.mismatch = Mismatch.from_json(rest.pop("mismatch"))
        if rest.get("classification"):
            signals = rest.pop("signals", None) or []
            record.profile = ProfileFigures.from_classification(rest.pop("classification"), signals,
                                                                rest.pop("report", None))
        if rest.get("lines"):
            record.lines = LineProfile.from_json(rest.pop("lines"))
        if rest.get("sanitizer"):
            record.sanitizer = SanitizerReport.from_json(rest.pop("sanitizer"))
        if rest.get("result"):
            record.check = CheckResult.from_json(rest.pop("result"))
            record.verdict = record.verdict or ("ok" if record.check.ok else "errors")
        record.details = rest
        return record

    def to_message(self) -> dict:
        """The record across a process boundary (the suite's GPU worker's reply): its JSON and where it was
        stored, or why it was not."""
        return {**self.to_json(), "record": self.path, "record_error": self.save_error}

    @classmethod
    def from_message(cls, d: dict) -> "RunRecord":
        """The record `to_message` sent."""
        d = dict(d)
        path, save_error = d.pop("record", None), d.pop("record_error", None)
        record = cls.from_json(d)
        record.path, record.save_error = path, save_error
        return record

    @property
    def source_digest(self) -> str | None:
        """text_digest of the source file when the action started (None for older records, which lack it)."""
        return self.details.get("source_digest")


def _ms(value: float) -> str:
    """3 significant figures, no exponent: 3.13, 0.0412, 12.5, 148."""
    return f"{value:.3g}" if value >= 1e-3 and value < 1e3 else f"{value:.4f}"


# -- storage ----------------------------------------------------------------------------------


def write(state_dir: StateDir | Path, kind: str, file: str, payload: dict | RunRecord) -> Path:
    """Store a record for `file`; returns its path. `latest-<kind>.json` always holds the newest."""
    state = _state(state_dir)
    record = payload if isinstance(payload, RunRecord) else RunRecord.from_payload(kind, file, payload)
    record.kind, record.file, record.schema = str(getattr(kind, "value", kind)), str(file), SCHEMA_VERSION
    folder = state.runs(file)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record.to_json(), indent=1, default=str)
    path = folder / f"{stamp()}-{record.kind}.json"
    write_atomic(path, text)
    write_atomic(state.latest_record(file, record.kind), text)
    record.path = str(path)
    return path


class Recorder:
    """One action that may end at any of several steps: `finish(verdict, message, **figures)` completes the
    producer's `payload` (verdict, message, seconds since the recorder was made), writes the record and returns
    it, typed. The payload keeps the producer's layout (schema 1's, which `RunRecord.from_payload` alone reads),
    so the JSON stored is what it was when producers handed back dicts."""

    def __init__(self, state_dir: StateDir | Path, kind: str, file: str, payload: dict):
        self.state_dir, self.kind, self.file, self.payload = state_dir, str(getattr(kind, "value", kind)), file, payload
        self.started = time.perf_counter()
        payload.setdefault("source_digest", source_digest(file))  # what the figures belong to: the text as it starts

    def finish(self, verdict: str, message: str, **figures) -> RunRecord:
        self.payload.update(verdict=str(getattr(verdict, "value", verdict)), message=message,
                            seconds=time.perf_counter() - self.started, **figures)
        record = RunRecord.from_payload(self.kind, self.file, self.payload)
        try:
            write(self.state_dir, self.kind, self.file, record)
        except OSError as e:  # a full disk: the verdict stands; the caller says it was not saved (files.py)
            record.path, record.save_error = None, str(e)
        return record


def read(path: Path) -> RunRecord | None:
    """The record at `path`; None when there is none. Never raises for a record's content: one this version
    cannot read comes back with a `note` saying so (its summary), so that a hover shows why."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError:
        return None
    except ValueError as e:
        return _unreadable(path, f"damaged run record ({e.__class__.__name__}): run it again")
    if not isinstance(data, dict):
        return _unreadable(path, "damaged run record: run it again")
    schema = data.get("schema")
    kind, file = str(data.get("kind", "")), str(data.get("file", ""))
    if schema not in READABLE_SCHEMAS:
        return _unreadable(path, f"record written by another cutegen version (schema {schema}, this one reads "
                                 f"{READABLE_SCHEMAS[0]}–{READABLE_SCHEMAS[-1]}): run {kind or 'it'} again", kind, file)
    try:
        record = RunRecord.from_json(data) if schema == SCHEMA_VERSION else RunRecord.from_payload(kind, file, data)
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        return _unreadable(path, f"unreadable {kind} record (schema {schema}: {e}): run {kind or 'it'} again", kind, file)
    record.schema, record.path = schema, str(path)
    return record


def latest(state_dir: StateDir | Path, file: str, kind: str) -> RunRecord | None:
    return read(_state(state_dir).latest_record(file, str(getattr(kind, "value", kind))))


def history(state_dir: StateDir | Path, file: str, kind: str, limit: int = 50) -> list[RunRecord]:
    """The stored records of one kind for `file`, newest first (the `limit` newest)."""
    folder = _state(state_dir).runs(file)
    names = sorted((p for p in folder.glob(f"*-{kind}.json") if p.name[:1].isdigit()), reverse=True)  # stamps sort
    return [r for r in (read(p) for p in names[:limit]) if r is not None and not r.note]


def text_digest(text: str) -> str:
    """A source text's identity (the agent's history names versions the same way: agent/history.text_id)."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def source_digest(file: str | Path) -> str | None:
    """text_digest of a file as it is on disk now; None when it cannot be read."""
    try:
        return text_digest(Path(file).read_bytes().decode("utf-8", errors="surrogateescape"))
    except OSError:
        return None


def latest_path(state_dir: StateDir | Path, file: str, kind: str) -> Path:
    return _state(state_dir).latest_record(file, kind)


def _state(state_dir: StateDir | Path) -> StateDir:
    return state_dir if isinstance(state_dir, StateDir) else StateDir(state_dir)


def _unreadable(path: Path, note: str, kind: str = "", file: str = "") -> RunRecord:
    return RunRecord(kind=kind, file=file, verdict="unreadable", note=note, path=str(path), schema=0)
