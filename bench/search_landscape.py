"""GPU: Optimize as a walk (beam:1x1, what repeated Optimize runs do) against a search (beam:2x2) on a scripted
landscape where the walk's first verified change blocks a larger one, and the search's pipeline (builds in
parallel, one judge) against the same search built serially.

The landscape is a SiLU over the idiom's problem (examples/idioms/elementwise_vec128: 67M floats). The start is a
scalar kernel, one element per thread. Replies are whole files a model could write, each keyed by the direction
asked (`DIRECTION: ...`) and the version it is asked of (its `// version:` line):
  start --128-bit--> vec (one float4 a thread)             the menu's first direction: the walk takes it
  start --More bytes--> ilp4 (four elements a thread, loads first)
  ilp4  --128-bit--> ilp4_vec (four float4 a thread)       only reachable through ilp4
  vec   --More bytes--> a version that does not compile    (the walk's dead end)
Every version is verified by the real judge on the real GPU; the speedups are what it measured.

    python bench/search_landscape.py [--steps 3] [--out search_landscape.json]

Reports: each arm's best version and its ratio against the start (the judge's, with its noise), the tree's size,
verified candidates per minute pipelined and serial (and their ratio), and the GPU's idle fraction during each
search (1 - the judge's busy seconds / the search's wall seconds; the judge's seconds include its host side).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from cutegen.agent.agent import Agent  # noqa: E402
from cutegen.agent.search import Limits, Shape  # noqa: E402
from cutegen.compile import Builder  # noqa: E402
from cutegen.harness.worker import Worker  # noqa: E402
from cutegen.settings import Settings  # noqa: E402
from cutegen.toolchain import discover  # noqa: E402
from tests.support.scripted_openai import ScriptedOpenAI  # noqa: E402

PROBLEM = ROOT / "examples" / "idioms" / "elementwise_vec128" / "elementwise_vec128.py"
VEC = "128-bit vectorized"
ILP = "More bytes in flight"

HEAD = """// cutegen: problem={problem}
// version: {name}
#include <cutegen/abi.h>
#include <cstdint>

namespace silu_impl {{
constexpr int kThreads = 256;
constexpr int kPer = {per};  // {unit}s per thread
__device__ __forceinline__ float silu(float x) {{ return x / (1.0f + expf(-x)); }}

__global__ void __launch_bounds__(kThreads)
scalar_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {{
  const int64_t base = int64_t(blockIdx.x) * kThreads * kPer + threadIdx.x;
  float v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {{ const int64_t i = base + int64_t(j) * kThreads; v[j] = i < n ? x[i] : 0.f; }}
#pragma unroll
  for (int j = 0; j < kPer; ++j) {{ const int64_t i = base + int64_t(j) * kThreads; if (i < n) y[i] = silu(v[j]); }}
}}
"""

VEC_KERNEL = """
__global__ void __launch_bounds__(kThreads)
vec_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  const int64_t base = int64_t(blockIdx.x) * kThreads * kPer + threadIdx.x;
  float4 v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) { const int64_t i = base + int64_t(j) * kThreads; if (i < n4) v[j] = x4[i]; }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int64_t i = base + int64_t(j) * kThreads;
    if (i < n4) y4[i] = make_float4(silu(v[j].x), silu(v[j].y), silu(v[j].z), silu(v[j].w));
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) { const int64_t i = n4 * 4 + threadIdx.x; y[i] = silu(x[i]); }
}
"""

TAIL = """}}  // namespace silu_impl

using namespace silu_impl;

CUTEGEN_EXPORT int cutegen_forward(const DLTensor* inputs, int num_inputs, DLTensor* outputs, int num_outputs,
                                   cudaStream_t stream) {{
  if (num_inputs != 1 || num_outputs != 1) return cudaErrorInvalidValue;
  const int64_t n = cutegen_numel(inputs[0]);
  if (cutegen_numel(outputs[0]) != n || inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
    return cudaErrorInvalidValue;
  if (n == 0) return (int)cudaGetLastError();
  const float* x = cutegen_data<const float>(inputs[0]);
  float* y = cutegen_data<float>(outputs[0]);
  const int64_t per_block = int64_t(kThreads) * kPer;
{launch}
  return (int)cudaGetLastError();
}}
"""

SCALAR_LAUNCH = "  scalar_kernel<<<unsigned((n + per_block - 1) / per_block), kThreads, 0, stream>>>(x, y, n);"
VEC_LAUNCH = """  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (aligned) {
    const int64_t units = n / 4 > 0 ? n / 4 : 1;
    vec_kernel<<<unsigned((units + per_block - 1) / per_block), kThreads, 0, stream>>>(x, y, n);
  } else {
    scalar_kernel<<<unsigned((n + per_block - 1) / per_block), kThreads, 0, stream>>>(x, y, n);
  }"""


def version(name: str, per: int, vec: bool, problem: Path, broken: bool = False) -> str:
    text = HEAD.format(problem=problem, name=name, per=per, unit="float4" if vec else "float")
    text += (VEC_KERNEL if vec else "") + TAIL.format(launch=VEC_LAUNCH if vec else SCALAR_LAUNCH)
    return text.replace("float4 v[kPer];", "float4 v[kPer] = load_all(x4);") if broken else text


def landscape(problem: Path) -> tuple[str, list[dict]]:
    def reply(direction: str, of: str, text: str) -> dict:
        return {"match": f"DIRECTION: {direction}", "match_also": [f"// version: {of}\n"], "repeat": True,
                "reply": f"CHANGE: {direction}\nThe whole file:\n```cuda\n{text}```\n"}

    start = version("start", 1, False, problem)
    entries = [reply(VEC, "start", version("vec", 1, True, problem)),
               reply(ILP, "start", version("ilp4", 4, False, problem)),
               reply(VEC, "ilp4", version("ilp4_vec", 4, True, problem)),
               reply(ILP, "vec", version("vec_ilp", 4, True, problem, broken=True))]
    # any other question: a reply that changes nothing a model would be allowed to send (rejected, remembered)
    entries.append({"match": "DIRECTION:", "repeat": True, "reply": "CHANGE: none\nThis version is already fine."})
    return start, entries


def arm(shape: str, steps: int, parallel: int | None, work: Path, server, problem: Path) -> dict:
    folder = work / shape.replace(":", "-") / (f"p{parallel}" if parallel else "auto")
    folder.mkdir(parents=True)
    start, _ = landscape(problem)
    kernel = folder / "silu.cu"
    kernel.write_text(start)
    settings = Settings(llm_base_url=server.url, llm_model="scripted", llm_api_key_env="CUTEGEN_BENCH_KEY",
                        test_timeout=300, llm_edit_format="whole")
    worker = Worker()
    try:
        agent = Agent(settings, Builder(discover(settings), settings, folder / ".cutegen"), worker,
                      state_dir=folder / ".cutegen")
        out = agent.search(kernel, start, Shape.parse(shape), limits=Limits(steps=steps), parallel=parallel)
    finally:
        worker.stop()
    stats = (out.proposal.figures if out.proposal else {}).get("search") or {}
    figures = out.proposal.figures if out.proposal else {}
    wall, judge = stats.get("wall_s") or 0.0, stats.get("judge_s") or 0.0
    return {"shape": shape, "parallel": parallel, "ok": out.ok, "message": out.message,
            "best_chain": figures.get("chain"), "best_gain": figures.get("gain"),
            "tree_size": figures.get("tree_size"), "search": stats,
            "judged_per_minute": round(60 * stats.get("judged", 0) / wall, 2) if wall else None,
            "gpu_idle_fraction": round(1 - judge / wall, 3) if wall else None}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    os.environ["CUTEGEN_BENCH_KEY"] = "sk-bench"
    work = Path(tempfile.mkdtemp(prefix="cutegen-search-"))
    _, entries = landscape(PROBLEM)
    with ScriptedOpenAI(entries, expect_key="sk-bench", log=open(os.devnull, "w")) as server:
        walk = arm("beam:1x1", args.steps, 1, work, server, PROBLEM)
        serial = arm("beam:2x2", args.steps, 1, work, server, PROBLEM)
        piped = arm("beam:2x2", args.steps, None, work, server, PROBLEM)
    result = {"walk": walk, "search_serial": serial, "search_pipelined": piped,
              "pipeline_speedup": (round(piped["judged_per_minute"] / serial["judged_per_minute"], 2)
                                   if piped["judged_per_minute"] and serial["judged_per_minute"] else None),
              "cpu_cores": os.cpu_count()}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
