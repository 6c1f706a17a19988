"""One typed settings object, shared by the CLI (flags, env) and the language server (workspace/configuration)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import ClassVar


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the setting."""


@dataclass
class Settings:
    nvcc: str | None = None  # path of nvcc; else CUDA_HOME/bin/nvcc, else PATH
    arch: str | None = None  # e.g. "sm_90a"; else the local GPU's, else sm_90a
    cutlass_path: str | None = None  # CUTLASS include dir (or its parent); else CUTLASS_PATH, else the wheel
    include_dirs: list[str] = field(default_factory=list)
    extra_flags: list[str] = field(default_factory=list)  # appended to every nvcc call
    # The folder of the project's compile_commands.json; else the nearest one above the file, else a build*/ folder
    # of the workspace (compile/compile_commands.py, as clangd finds it).
    compile_commands_dir: str | None = None
    check_timeout: float = 120.0  # seconds
    build_timeout: float = 300.0
    test_timeout: float = 120.0
    ncu: str | None = None  # path of Nsight Compute's ncu; else PATH, else CUDA's bin/
    profile_timeout: float = 300.0
    # The user's own program, profiled or sanitized from the editor (CuTeGen: Profile Program): its argv (a user
    # setting: a workspace cannot choose what runs, workspace_trust.py), which kernels (a name or `regex:...`), how
    # many matching launches, and the ELF whose line tables map the samples (`python x.py` needs the extension's .so).
    program_command: list[str] = field(default_factory=list)
    program_kernel: str | None = None
    program_launches: int = 1
    program_binary: str | None = None
    problem: str | None = None  # explicit problem file, overrides pairing
    # What fp32 outputs are judged against (harness/truth.py): "fp64", the reference evaluated in float64 (pass
    # within tolerance of it, or no farther from it than the fp32 reference is); "kernelbench", KernelBench's own
    # check (the fp32 eager reference and its tolerance), for reproducing published numbers.
    reference_mode: str = "fp64"
    # The background loop (background.py): after a save that compiles cleanly, test, then time, then profile. On
    # by default where it can run (an NVIDIA GPU and a paired problem); without a GPU it is off, said once.
    test_on_save: bool = True
    profile_after_test: bool = True  # profile a passing version whose text changed since the last profile
    auto_test: bool = False  # the older name: true also tests where there is no GPU (built, recorded as not run)
    # Errors while typing: the type tier (clang's front end on the unsaved text, typecheck/checker.py) after
    # typing stops; nvcc on save stays the truth. On by default (issue 54: an edit's error in under a second on an
    # example-sized kernel, bench/typing_probe.py). Its cost is capped: one parse at a time (a newer edit kills
    # the older), one header-set build at a time, each a process of ~0.4 GB (a GEMM's warm set ~1.3 GB).
    check_on_type: bool = True
    debounce_ms: int = 600
    layout_inlay_hints: str = "short"  # concrete CuTe layouts after declarations: "off", "short" (≤ 60 chars), "all"
    # The background fix (lsp/agent.py's after_publish) sends a failing kernel to the LLM on its own; without this
    # (a user setting: a workspace cannot set it, workspace_trust.py) only after an agent command on that endpoint.
    background_agent: bool = False
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable, never the key itself
    temperature: float = 0.2  # 0 = greedy
    max_tokens: int = 4096  # per reply; a reply cut off at this limit is never applied
    # What a request carries (agent/endpoint.py). "auto" sends max_tokens and the temperature and, when the
    # endpoint answers HTTP 400 naming one (reasoning models want max_completion_tokens and only their default
    # temperature), sends it mapped or omitted once and remembers that for the endpoint + model (in the
    # session and in .cutegen/); a value chosen here is sent as it is, and a refusal of it names this setting.
    llm_token_parameter: str = "auto"  # "max_tokens", "max_completion_tokens", or "none" (no limit sent)
    llm_send_temperature: str = "auto"  # "yes", "no"
    llm_reasoning_effort: str = "off"  # sent as reasoning_effort (where the endpoint takes it); "off" sends none
    llm_stream: str = "auto"  # "auto": plain replies until the endpoint answers with an event stream; "yes", "no"
    llm_timeout: float = 120.0  # seconds for one request, before a retry
    llm_retries: int = 3  # retries after a timeout, 429, 5xx or a malformed reply
    max_rounds: int = 3  # agent rounds (diagnose → patch → verify) before giving up
    # What Optimize (and the search) calls a better candidate (agent/objective.py): "time" (ms/call), "energy"
    # (J/call from NVML's energy counter, harness/energy.py) or "edp" (energy × delay); better only beyond the
    # noise of that figure. Without an energy figure (no NVML) energy and edp compare nothing, and say why.
    optimize_objective: str = "time"
    # The edit format the prompts ask for (agent/edit_formats.py). "auto" asks for SEARCH/REPLACE
    # blocks -- they quote the code they change, so they re-anchor when lines move and need no line
    # counting, and public edit-format benchmarks find them the most reliable across models -- and
    # accepts a reply in any format, since the one matcher refuses whatever it cannot place safely.
    llm_edit_format: str = "auto"
    llm_context_tokens: int = 32768  # the endpoint's context window: prompts are cut to fit it with maxTokens
    # "pipeline": the fixed diagnose → patch → verify rounds; "tools": the model calls check, test, bench,
    # profile, knowledge_search, cute_api and propose_patch itself (agent/tools.py), within these budgets;
    # an endpoint that does not take tool calls falls back to the pipeline.
    llm_mode: str = "pipeline"
    llm_tool_calls: int = 12  # tool calls per session
    # Optimize's shape (agent/search.py): "greedy", one verified change per run; "beam:WxK", a search that expands the
    # W most promising versions a step with K candidates each (other menu directions), within these budgets, and
    # keeps every version in the kernel's tree (`cutegen versions`).
    optimize_search: str = "greedy"
    optimize_steps: int = 3
    optimize_minutes: float = 30.0
    optimize_tokens: int = 200000
    llm_tool_seconds: float = 900.0  # wall time per session
    sandbox: str = "required"  # "required": model-written candidates run only jailed; "off": unjailed, with a warning

    @classmethod
    def from_dict(cls, raw: dict | None) -> tuple["Settings", list[str]]:
        """Build settings from a loosely typed dict (camelCase or snake_case keys).

        Returns the settings and one message per rejected value: a bad value keeps its default
        and is reported, it never raises.
        """
        s, problems = cls(), []
        if not raw:
            return s, problems
        by_name = {f.name: f for f in fields(cls)}
        for key, value in raw.items():
            name = _snake(key)
            if name not in by_name or value is None:
                continue
            default = getattr(s, name)
            try:
                setattr(s, name, _coerce(value, default, name))
            except SettingsError as e:
                problems.append(str(e))
        return s, problems

    # Not a setting: how messages name one. The CLI sets "cli" (its flags), the editor keeps "editor" (cutegen.*).
    interface: ClassVar[str] = "editor"
    # Not a setting: a check of a source that includes PyTorch's headers (a ModelNew file, a torch extension's .cu)
    # parses 425k lines of them first: 35-55 s on 2 idle cores, and 120-129 s were measured on a loaded one, past
    # the plain default. Its check timeout is this many times check_timeout (120 s → 360 s by default).
    TORCH_CHECK_FACTOR: ClassVar[float] = 3.0

    def check_timeout_for(self, includes_torch: bool) -> float:
        return self.check_timeout * (self.TORCH_CHECK_FACTOR if includes_torch else 1.0)

    def name_of(self, name: str) -> str:
        """'--llm-base-url' on the command line, 'cutegen.llmBaseUrl' in the editor."""
        if self.interface == "cli":
            return CLI_FLAGS.get(name, "--" + name.replace("_", "-"))
        return editor_key(name)


CLI_FLAGS = {"check_timeout": "--timeout", "test_timeout": "--timeout", "profile_timeout": "--timeout",
             "include_dirs": "-I", "optimize_objective": "--objective"}


def editor_key(name: str) -> str:
    return "cutegen." + "".join(w.capitalize() if i else w for i, w in enumerate(name.split("_")))


CHOICES = {"llm_edit_format": ("auto", "diff", "search-replace", "json", "whole"),  # kept in step with edit_formats
           "llm_mode": ("pipeline", "tools"),
           "llm_token_parameter": ("auto", "max_tokens", "max_completion_tokens", "none"),
           "llm_send_temperature": ("auto", "yes", "no"),
           # the openai package's ReasoningEffort values; "off" sends no reasoning_effort at all
           "llm_reasoning_effort": ("off", "none", "minimal", "low", "medium", "high", "xhigh", "max"),
           "llm_stream": ("auto", "yes", "no"),
           "sandbox": ("required", "off"),
           "reference_mode": ("fp64", "kernelbench"),  # kept in step with harness.truth.ReferenceMode
           "layout_inlay_hints": ("off", "short", "all"),
           "optimize_objective": ("time", "energy", "edp")}  # kept in step with agent.objective.OBJECTIVES
SEARCH_SPEC = re.compile(r"^(?:greedy|beam:(\d+)x(\d+))$")  # agent/search.py's Shape reads it
_ZERO_ALLOWED = {"temperature", "llm_retries"}  # 0 is meaningful: greedy sampling, no retries


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _coerce(value, default, name: str):
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise SettingsError(f"{editor_key(name)} must be true or false, not {value!r}")
    if isinstance(default, (int, float)):
        floor_ok = name in _ZERO_ALLOWED and value == 0
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (value <= 0 and not floor_ok):
            kind = "a number ≥ 0" if name in _ZERO_ALLOWED else "a positive number"
            raise SettingsError(f"{editor_key(name)} must be {kind}, not {value!r}")
        return type(default)(value)
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{editor_key(name)} must be a list of strings, not {value!r}")
        return value
    if not isinstance(value, str):
        raise SettingsError(f"{editor_key(name)} must be a string, not {value!r}")
    if name == "optimize_search" and not SEARCH_SPEC.match(value):
        raise SettingsError(f"{editor_key(name)} must be greedy or beam:WxK (e.g. beam:4x3), not {value!r}")
    if name in CHOICES and value not in CHOICES[name]:
        raise SettingsError(f"{editor_key(name)} must be one of {', '.join(CHOICES[name])}, not {value!r}")
    return value or None if default is None else value
