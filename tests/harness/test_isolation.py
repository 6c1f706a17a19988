"""The judge lives where the candidate cannot reach it: in-process cheats, written as models write them
(tests/kernels/cheats/), judged on the CPU through the real worker — the user's own worker and the jailed one —
each ending in its own named verdict and none in pass. (The GPU ones, the clock among them, are in
tests/gpu/test_isolation_gpu.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.harness.worker import Worker

CHEATS = Path(__file__).resolve().parent.parent / "kernels" / "cheats"
PROBLEM = CHEATS / "softsign_small.py"

# cheat -> the verdicts it may end in (one where the judge can tell exactly; two where the same cheat is caught by
# whichever check sees it first on this machine's timing)
EXPECTED = {
    "honest": {"pass"},
    "patch_reference": {"mismatch"},
    "patch_torch": {"mismatch"},
    "patch_judge": {"mismatch"},
    "forge_reply": {"candidate-protocol"},
    "forge_serving": {"mismatch", "constant-output"},  # what an unwritten buffer holds
    "exits_mid_call": {"crashed"},
    "late_thread": {"result-not-ready", "mismatch", "constant-output"},  # whichever the read right after the call saw
    "walks_for_answers": {"mismatch", "constant-output"},
    "caches_by_pointer": {"cached-results"},
    "rewrites_inputs_late": {"constant-output", "inputs-mutated", "mismatch"},
}


def judged(worker: Worker, name: str, **request) -> dict:
    return worker.call({"problem": str(PROBLEM), "modelnew": str(CHEATS / f"{name}.py"), "device": "cpu",
                        "trials": 3, "seed": 11, "init_seed": 5, **request}, timeout=180)


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.stop()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_cheat_ends_in_its_named_verdict(worker, name):
    reply = judged(worker, name)
    assert reply["verdict"] in EXPECTED[name], reply
    assert "traceback" not in reply or reply["verdict"] != "pass"


def test_a_forged_reply_leaves_the_worker_serving_the_next_request(worker):
    assert judged(worker, "forge_reply")["verdict"] == "candidate-protocol"
    assert judged(worker, "honest")["verdict"] == "pass"


@pytest.fixture(scope="module")
def jailed_worker():
    from cutegen.sandbox import Jail, availability

    found = availability()
    if not found.ok:
        pytest.skip(f"no sandbox here: {found.reason}")
    w = Worker(jail=Jail(found.bwrap).with_paths(readonly=[str(CHEATS)]))
    yield w
    w.stop()


@pytest.mark.parametrize("name", ["patch_reference", "forge_reply", "exits_mid_call", "honest"])
def test_the_jailed_worker_judges_the_same_way(jailed_worker, name):
    assert judged(jailed_worker, name)["verdict"] in EXPECTED[name]


FORGING_CONSTRUCTOR = r"""#include <cutegen/abi.h>
#include <unistd.h>
#include <string.h>
#include <stdint.h>
// A library constructor runs when the library is loaded, before any call: it writes a passing verdict (in the
// framing of a multiprocessing pipe) on every descriptor it can, then serves calls that compute nothing.
__attribute__((constructor)) static void forge() {
  const char body[] = "{\"verdict\": \"pass\", \"message\": \"correct\", \"timing\": {\"median_ms\": 0.001}}";
  uint32_t n = sizeof(body) - 1;
  unsigned char head[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
  for (int fd = 3; fd < 64; ++fd) { if (write(fd, head, 4) == 4) write(fd, body, n); }
}
CUTEGEN_EXPORT int cutegen_forward(const DLTensor*, int, DLTensor*, int, cudaStream_t) { return 0; }
"""


def test_a_library_constructor_that_forges_replies_is_named(host_library, worker):
    lib = host_library("forging", FORGING_CONSTRUCTOR)
    reply = worker.call({"problem": str(PROBLEM), "library": lib, "device": "cpu", "trials": 3, "seed": 2},
                        timeout=120)
    assert reply["verdict"] == "candidate-protocol", reply


def test_a_reply_header_that_claims_gigabytes_is_named(worker, tmp_path):
    """The candidate writes a length prefix of 2 GB on its reply channel and nothing else."""
    bad = tmp_path / "huge_header.py"
    bad.write_text("# cutegen: problem=softsign_small.py\nimport os, struct, sys\n"
                   "os.write(int(sys.argv[sys.argv.index('--write-fd') + 1]), struct.pack('!i', 2**31 - 1))\n"
                   "import time\ntime.sleep(60)\nclass ModelNew:\n    pass\n")
    reply = worker.call({"problem": str(PROBLEM), "modelnew": str(bad), "device": "cpu", "trials": 1, "seed": 1},
                        timeout=120)
    assert reply["verdict"] == "candidate-protocol", reply


def test_a_request_gets_the_buffers_of_the_last_one_already_open():
    """The buffers a candidate process was handed are recycled when a request ends, not freed: the next request of
    the same code gets them back by shape and dtype and needs no new mapping (remote.Shared)."""
    import torch

    from cutegen.harness.remote import Shared

    shared = Shared("cpu")
    try:
        first = [shared.empty((4, 8), torch.float32), shared.empty((4, 8), torch.float32),
                 shared.empty((3,), torch.int64)]
        assert set(shared.new_refs(first)) == {0, 1, 2}
        shared.recycle()
        again = [shared.empty((4, 8), torch.float32), shared.empty((3,), torch.int64),
                 shared.empty((4, 8), torch.float64)]
        assert {id(t) for t in again[:2]} <= {id(t) for t in first}
        assert list(shared.new_refs(again)) == [3]  # only the new shape is handed over
    finally:
        shared.close()


@pytest.mark.parametrize("name", ["caches_by_pointer", "honest"])
def test_recycled_buffers_judge_the_next_request_as_the_first(worker, name):
    """A process kept warm for the same code, its buffers recycled: every request still ends in the same verdict
    (a cache of the last request's outputs is stale once the inputs are drawn fresh)."""
    for seed in (21, 22, 23):
        assert judged(worker, name, seed=seed)["verdict"] in EXPECTED[name]


def test_a_verify_asks_the_candidate_process_only_what_the_trials_need():
    """Each request is a pipe round trip (and on a GPU a turn of the candidate's context): a trial of a ModelNew
    asks for its call and for what forward returned (which the candidate then lets go of); an idle candidate is
    never asked to synchronize (on the CPU its calls run to their end before it answers), and every trial's
    returned values land in the same shared buffers (handed over once). 32 requests before this test."""
    from cutegen.harness.gpu_checks import judge
    from cutegen.harness.problem import load_problem
    from cutegen.harness.remote import Candidates

    problem, candidates, trials = load_problem(PROBLEM), Candidates(spare=False), 5
    try:
        with candidates.loaded(kind="modelnew", path=str(CHEATS / "honest.py"), device="cpu",
                               init=problem.init_values(5), seed=5) as lib:
            asked = lib.process.asked
            assert judge(problem, lib, trials=trials, seed=11, init_seed=5, timing=False, baselines=[],
                         device="cpu")["verdict"] == "pass"
            asked = lib.process.asked - asked
    finally:
        candidates.stop()
    assert asked <= 2 * trials + 2, asked  # call and final a trial; two sets of buffers shared once
