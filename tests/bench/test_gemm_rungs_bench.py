"""bench/gemm_rungs.py's CPU half: it times every kernel of the Hopper GEMM ladder, and its flagship candidates
are one schedule each on the shared launcher."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import gemm_rungs  # noqa: E402


def test_every_kernel_of_the_shared_launcher_is_a_rung():
    users = {p.stem for p in ROOT.glob("examples/**/*.cu") if "gemm_sm90_common.cuh" in p.read_text()}
    assert users and users <= set(gemm_rungs.RUNGS), users - set(gemm_rungs.RUNGS)
    assert all(p.is_file() for p in gemm_rungs.RUNGS.values())


def test_a_candidate_is_one_schedule_on_the_shared_launcher(tmp_path):
    """A candidate times one kernel at every shape (the flagship picks among four by shape): its own schedule, or
    the flagship's large one, and its launch options."""
    large = gemm_rungs.flagship_schedule()
    assert large.startswith("Shape<_128, _256, _64>"), large
    for name, path in gemm_rungs.write_candidates(tmp_path).items():
        text = " ".join(path.read_text().split())
        arguments, options = gemm_rungs.CANDIDATES[name]
        assert f"Sm90Gemm<{' '.join((arguments or large).split())}>::Gemm;" in text, name
        assert f"LaunchOptions kOptions{{{options or ''}}};" in text, name
        assert text.count("Sm90Gemm<") == 1 and "launch<candidate_impl::Gemm>" in text, name
        include = next(line for line in path.read_text().splitlines() if line.startswith("#include"))
        assert Path(include.split('"')[1]).is_file(), include


def test_pooled_ratio_spans_every_block_of_every_process():
    """bench/gemm_timing_methods.py --pool: a kernel that beats cuBLAS in one process and loses in another has an
    interval that holds 1.0, though each process alone would say otherwise."""
    import gemm_timing_methods as methods

    def run(kernel_ms: list[float]) -> dict:
        blocks = []
        for ms in kernel_ms:
            block = {}
            for method in methods.METHODS:
                block[f"cuBLAS|{method}"], block[f"gemm_bf16|{method}"] = 0.180, ms
                block[f"cuBLAS_out|{method}"] = 0.178  # the preallocated-output call, faster here
            blocks.append(block)
        return {"blocks": blocks}

    pooled = methods.pool([run([0.176, 0.177, 0.178]), run([0.181, 0.182, 0.183])])
    flagship = pooled["gemm_bf16|graph-flush"]
    assert flagship["blocks"] == 6
    assert flagship["interval"][0] < 1.0 < flagship["interval"][1]
    assert flagship["run_medians"][0] > 1.0 > flagship["run_medians"][1]
    assert pooled["cuBLAS|event"]["x_cublas"] == 1.0
    # against the faster cuBLAS call the first process's 0.176 ms is 0.178 / 0.176 = 1.011x, not 1.023x
    assert flagship["best_interval"][1] == 0.178 / 0.176
    # six blocks are too few for a 95 % interval of order statistics: it is the whole range, holding 1.0
    assert flagship["best_ci95"] == flagship["best_interval"]
    assert flagship["best_run_medians"][0] > 1.0 > flagship["best_run_medians"][1]
    assert flagship["best_runs_ci95"] == sorted(flagship["best_run_medians"])  # two processes: their range


def test_one_slow_block_does_not_veto_a_steady_lead():
    """The pooled 95 % interval (the harness's, over every block) lies above 1.0 for a kernel 1 % faster than cuBLAS
    in 19 of 20 blocks and slower in one (a slow clock in that block), where min..max would hold 1.0; and a kernel
    level with cuBLAS keeps 1.0 inside its interval."""
    import gemm_timing_methods as methods

    def run(kernel_ms: list[float]) -> dict:
        return {"blocks": [{**{f"{name}|{method}": 0.180 for name in ("cuBLAS", "cuBLAS_out")
                               for method in methods.METHODS},
                            **{f"gemm_bf16|{method}": ms for method in methods.METHODS}} for ms in kernel_ms]}

    steady = [0.180 / (1.01 + 0.001 * (i % 5)) for i in range(10)]
    pooled = methods.pool([run(steady), run(steady[:9] + [0.185])])
    flagship = pooled["gemm_bf16|graph-flush"]
    assert flagship["best_interval"][0] < 1.0 < flagship["best_ci95"][0]
    assert min(flagship["best_run_medians"]) > 1.0
    level = methods.pool([run([0.180 * (1 + 0.004 * (i % 5 - 2)) for i in range(10)])])["gemm_bf16|event"]
    assert level["best_ci95"][0] < 1.0 < level["best_ci95"][1]


RECORDS = ROOT / "tests" / "records" / "h100"


def _traffic(name: str, record: Path = RECORDS / "gemm_traffic") -> dict[str, float]:
    import gemm_traffic

    table = record.with_name(f"{record.name}_{name}.csv").read_text()
    header = table.splitlines()[0]
    # the metrics this record was taken with (later ones join the bench when ncu lists them)
    metrics = {key: value for key, value in {**gemm_traffic.METRICS, **gemm_traffic.SOURCES}.items()
               if f'"{value[0]}"' in header}
    return gemm_traffic.per_call(table, metrics)


def _per_call(record: str) -> dict[str, dict[str, float]]:
    """bench/gemm_traffic.py's per-call summary saved as RECORDS / f"{record}.json", by kernel."""
    return json.loads((RECORDS / f"{record}.json").read_text())["per_call"]


def _pooled(record: str) -> dict[str, dict]:
    """The two processes of bench/gemm_timing_methods.py saved as RECORDS / f"{record}_{1,2}.json", pooled as the
    bench pools them."""
    import gemm_timing_methods as methods

    return methods.pool([json.loads((RECORDS / f"{record}_{i}.json").read_text()) for i in (1, 2)])


def test_traffic_reads_ncus_own_table_as_the_readme_quotes_it():
    """bench/gemm_traffic.py on ncu's raw CSV pages captured on an H100 (4096^3, one call each): cuBLAS and the
    flagship deliver the same operand bytes to the SMs, cuBLAS with 17 % fewer read sectors at L2."""
    cublas, flagship = _traffic("cuBLAS"), _traffic("gemm_bf16")
    operands = 512 * (128 + 256) * 4096 * 2 / 1e6  # 512 tiles of 128x256, each reads its A and B panels
    for row in (cublas, flagship):
        assert row["L2 -> SM MB"] == pytest.approx(operands, rel=1e-4)
        # every byte through L2 came from the SMs' reads, their writes or the other partition across the fabric
        parts = row["L2 <- SM read MB"] + row["L2 <- SM write MB"] + row["L2 <- fabric MB"]
        assert row["L2 MB"] == pytest.approx(parts, rel=0.005)
        assert row["L2 <- SM write MB"] == pytest.approx(4096 * 4096 * 2 / 1e6, rel=1e-6)  # D, once
        assert 0 < row["L2 hit %"] < 100
    assert cublas["L2 <- SM read MB"] / flagship["L2 <- SM read MB"] == pytest.approx(0.831, abs=0.001)
    summary = _per_call("gemm_traffic")
    assert summary["cuBLAS"] == pytest.approx(cublas) and summary["gemm_bf16"] == pytest.approx(flagship)


def test_l2s_request_coalescer_merges_cublass_reads_across_sms_three_times_as_often():
    """The same bench with the LRC's counters, on an H200 (4096^3, one call each): every kernel sends L2's request
    coalescer the same reads (each tile's operands, B once per 2-CTA cluster) and multicast merges the same B
    panels; the whole of cuBLAS's lead in L2 reads is reads merged because several SMs asked at once."""
    record = ROOT / "tests" / "records" / "h200" / "gemm_traffic_lrc"
    cublas, flagship, twin = (_traffic(name, record) for name in ("cuBLAS", "gemm_bf16", "coop_128x256_c2x1_sw1_even"))
    requested = 256 * 64 * (2 * 128 + 256) * 64 * 2 / 1e6  # 256 clusters' tiles x 64 k-steps: two A panels, one B
    b_panels = 256 * 64 * 256 * 64 * 2 / 1e6
    for row in (cublas, flagship, twin):
        assert row["LRC mergeable read MB"] == pytest.approx(requested, rel=1e-4)
        assert row["LRC merged, multicast MB"] == pytest.approx(b_panels, rel=1e-4)
        # L2 serves every requested sector but those merged with another SM's request
        served = row["LRC mergeable read MB"] - row["LRC merged, several SMs MB"]
        assert row["L2 -> LRC read MB"] == pytest.approx(served, rel=1e-3)
    assert cublas["LRC merged, several SMs MB"] == pytest.approx(247.7, abs=0.1)
    assert flagship["LRC merged, several SMs MB"] == pytest.approx(73.4, abs=0.1)
    assert twin["LRC merged, several SMs MB"] == pytest.approx(84.6, abs=0.1)
    summary = json.loads(record.with_suffix(".json").read_text())["per_call"]
    assert summary["cuBLAS"] == pytest.approx(cublas) and summary["gemm_bf16"] == pytest.approx(flagship)


def test_traffic_names_a_table_without_kernels():
    import gemm_traffic

    header = (RECORDS / "gemm_traffic_cuBLAS.csv").read_text().splitlines()[:2]  # the names and the units only
    with pytest.raises(SystemExit, match="holds no kernel"):
        gemm_traffic.per_call("\n".join(header), gemm_traffic.METRICS)


def test_sass_counts_show_cublas_loads_what_the_flagship_loads():
    """bench/gemm_sass.py's record of one 4096^3 call each (H200, ncu's SourceCounters): cuBLAS's nvjet kernel, named
    256x128 with a 1x2 cluster in its column-major frame, issues the flagship's TMA loads (per CTA and 64-deep k-step,
    one plain load of A's 128x64 panel and four multicast pieces of B's), so in torch's frame it is the flagship's
    128x256 tile with B multicast over a 2x1 cluster; the 256x128/1x2 candidate multicasts A instead."""
    import gemm_sass

    calls = json.loads((ROOT / "tests" / "records" / "h200" / "gemm_sass.json").read_text())["per_call"]
    steps = 512 * 4096 // 64  # 512 tiles of 128x256 (or 256x128), each 64 k-steps
    cublas, flagship, a_multicast = (calls[n]["opcodes"] for n in ("cuBLAS", "gemm_bf16", "coop_256x128_c1x2_even"))
    for loads in (cublas, flagship):
        assert (loads["UTMALDG.3D"], loads["UTMALDG.3D.MULTICAST"]) == (steps, 4 * steps)
    assert (a_multicast["UTMALDG.3D"], a_multicast["UTMALDG.3D.MULTICAST"]) == (2 * steps, steps)
    # the same MMA work: 64x256x16 once or 64x128x16 twice per warpgroup and 16-deep k-step, 4 warps each
    assert flagship["HGMMA.64x256x16.F32.BF16"] * 2 == cublas["HGMMA.64x128x16.F32.BF16"] == 2 * 4 * 2 * steps * 4
    table = gemm_sass.table(calls)
    assert "UTMALDG.3D.MULTICAST" in table and "all HGMMA" in table
    assert table.splitlines()[-4] == "cuBLAS: nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"


def test_sass_opcodes_keep_modifiers_and_drop_predicates():
    import gemm_sass

    assert gemm_sass.opcode("@!UP0 UTMALDG.3D.MULTICAST [UR8], [UR16], UR6, desc[UR10] ;") == "UTMALDG.3D.MULTICAST"
    assert gemm_sass.opcode("  HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4].tnspB, R24, gsb0 ;") == "HGMMA.64x256x16.F32.BF16"
    assert gemm_sass.family("SYNCS.PHASECHK.TRANS64.TRYWAIT") == "SYNCS" and gemm_sass.family("IMAD.WIDE") == "other"


def test_producers_in_lockstep_get_their_reads_merged_like_cublas_and_run_two_thirds_as_fast():
    """H100 records of the lockstep candidate (every CTA's producer issues each k-step's loads together with every
    other's): L2's request coalescer merges 4x the flagship's reads that several SMs ask for at once, cuBLAS's
    level, but the grid-wide barrier per k-step costs a third of the speed (two processes, pooled by the bench)."""
    traffic = _per_call("gemm_lockstep_traffic")
    cublas, flagship, lockstep = (traffic[name] for name in ("cuBLAS", "gemm_bf16", "lockstep_128x256_c2x1_sw1_even"))
    merged = {name: row["LRC merged, several SMs MB"] for name, row in traffic.items()}
    assert merged["lockstep_128x256_c2x1_sw1_even"] / merged["gemm_bf16"] == pytest.approx(4.03, abs=0.01)
    assert merged["lockstep_128x256_c2x1_sw1_even"] / merged["cuBLAS"] == pytest.approx(0.866, abs=0.001)
    for row in (cublas, flagship, lockstep):  # what L2 serves is what was asked less what was merged
        served = row["LRC mergeable read MB"] - row["LRC merged, several SMs MB"]
        assert row["L2 -> LRC read MB"] == pytest.approx(served, rel=2e-3)
    assert lockstep["instructions M"] == pytest.approx(cublas["instructions M"], rel=0.01)  # the barrier's few
    pooled = _pooled("gemm_lockstep_timing")
    graph = pooled["lockstep_128x256_c2x1_sw1_even|graph-flush"]
    assert graph["blocks"] == 10 and graph["x_best_cublas"] == pytest.approx(0.653, abs=0.001)
    assert graph["interval"][1] < 0.7 < pooled["gemm_bf16|graph-flush"]["interval"][0]


def test_looser_lockstep_barriers_merge_more_reads_and_none_is_as_fast_as_the_flagship():
    """H100 records of the lockstep mainloop's looser barriers: every one merges at least twice the flagship's reads
    that several SMs asked for at once (the 32 CTAs that share A panels, every k-step: cuBLAS's level), and every
    one is slower than the flagship in the same processes, the best (a producer at most one k-step ahead of the
    slowest) by ~3 %. Fewer L2 bytes alone do not buy the clock that would pay for the waits."""
    traffic = _per_call("gemm_lockstep_variants_traffic")
    merged = {name: row["LRC merged, several SMs MB"] for name, row in traffic.items()}
    pooled = _pooled("gemm_lockstep_variants_timing")
    flagship = pooled["gemm_bf16|graph-flush"]
    assert merged["lockstep_row_128x256_c2x1_sw1_even"] == pytest.approx(merged["cuBLAS"], rel=0.05)
    for kind in ("slack1", "slack2", "every8", "row", "poll1us"):
        name = f"lockstep_{kind}_128x256_c2x1_sw1_even"
        assert merged[name] > 2 * merged["gemm_bf16"]
        assert pooled[f"{name}|graph-flush"]["blocks"] == 10
        assert pooled[f"{name}|graph-flush"]["interval"][1] < flagship["interval"][0]
    best = pooled["lockstep_slack1_128x256_c2x1_sw1_even|graph-flush"]["x_best_cublas"]
    assert flagship["x_best_cublas"] - best == pytest.approx(0.033, abs=0.003)


def test_tiles_first_come_first_served_merge_a_little_more_and_run_slower():
    """H100 records of cuBLAS's scheduling built into the flagship's schedule (DynamicTiles<2>: two cluster tiles by
    launch index, the rest from a global counter): the LRC merges more reads that several SMs ask for at once than
    the static order does, far from cuBLAS's, and the scheduler's polling (a fifth more instructions) and its memset
    cost more than that buys: ~0.955x the best cuBLAS where the flagship reads ~0.985x in the same processes."""
    traffic = _per_call("gemm_dynamic_traffic")
    merged = {name: row["LRC merged, several SMs MB"] for name, row in traffic.items()}
    for name in ("dynamic2_128x256_c2x1", "dynamic2_128x256_c2x1_even"):
        assert merged["gemm_bf16"] * 1.45 < merged[name] < merged["cuBLAS"] * 0.4
        assert traffic[name]["instructions M"] > 1.25 * traffic["gemm_bf16"]["instructions M"]
    pooled = _pooled("gemm_dynamic_timing")
    flagship = pooled["gemm_bf16|graph-flush"]
    for name in ("dynamic2_128x256_c2x1", "dynamic2_128x256_c2x1_even"):
        graph = pooled[f"{name}|graph-flush"]
        assert graph["blocks"] == 10 and graph["x_best_cublas"] == pytest.approx(0.955, abs=0.003)
        assert graph["x_best_cublas"] < flagship["x_best_cublas"] - 0.025
    tile = pooled["lockstep_tile_128x256_c2x1_sw1_even|graph-flush"]  # producers together once per tile
    assert tile["x_best_cublas"] == pytest.approx(0.978, abs=0.002)


def test_one_drawer_per_cluster_merges_more_but_still_trails_the_flagship():
    """H100 records of DynamicTilesShared (cuBLAS's plumbing: one atomic per cluster tile, answers handed on in shared
    memory, no memset): it merges 2.6-2.8x the flagship's reads that several SMs asked for at once (half of
    cuBLAS's), L2 serves 7 % fewer bytes, and it is still slower than the flagship in the same processes; it issues
    the same fifth more instructions as DynamicTiles, so that excess is not the polling of L2 that it removed."""
    traffic = _per_call("gemm_dynshared_traffic")
    flagship_row = traffic["gemm_bf16"]
    for name in ("dynshared2_128x256_c2x1", "dynshared2_128x256_c2x1_even"):
        row = traffic[name]
        assert 2.6 < row["LRC merged, several SMs MB"] / flagship_row["LRC merged, several SMs MB"] < 2.8
        assert row["L2 -> LRC read MB"] / flagship_row["L2 -> LRC read MB"] == pytest.approx(0.93, abs=0.005)
        assert row["instructions M"] == pytest.approx(20.8, abs=0.05)
    pooled = _pooled("gemm_dynshared_timing")
    flagship = pooled["gemm_bf16|graph-flush"]["x_best_cublas"]
    for name, behind in (("dynshared2_128x256_c2x1", 0.011), ("dynshared2_128x256_c2x1_even", 0.020)):
        graph = pooled[f"{name}|graph-flush"]
        assert graph["blocks"] == 10 and flagship - graph["x_best_cublas"] == pytest.approx(behind, abs=0.002)


def test_at_the_power_cap_the_flagship_loses_work_per_clock_not_clock():
    """Each GEMM back to back for 4 s, twice, nvidia-smi sampling (H100, `gpu-check.sh gemm-clocks`): all sit at the
    ~698 W software power cap (clock-event reason 0x4 in every sample) at 1402-1410 MHz, one 7.5 MHz step apart at
    most; cuBLAS does ~2.4 % more TFLOP/s per MHz than the flagship, and the candidates whose L2 serves fewer bytes
    gain that step of clock but lose more per clock."""
    sustained = json.loads((RECORDS / "gemm_clocks_sustained.json").read_text())["sustained"]
    per_mhz = {name: sum(row["tflops"]) / len(row["tflops"]) / row["sm_mhz"] for name, row in sustained.items()}
    for row in sustained.values():
        assert row["reasons"] == {"0x4": row["samples"]} and row["watts"] == pytest.approx(698, abs=2)
        assert 1400 <= row["sm_mhz"] <= 1410
    assert per_mhz["cuBLAS"] / per_mhz["gemm_bf16"] == pytest.approx(1.024, abs=0.002)
    for name in ("dynshared2_128x256_c2x1", "lockstep_slack1_128x256_c2x1_sw1_even"):
        assert sustained[name]["sm_mhz"] >= sustained["gemm_bf16"]["sm_mhz"] and per_mhz[name] < per_mhz["gemm_bf16"]


def test_cublas_hands_out_its_last_tiles_from_an_atomic_counter():
    """cuBLAS's 4096^3 kernel PC by PC (bench/gemm_sass.py --listing, H100): its 66 clusters take their first two
    cluster tiles by launch index, as a static persistent kernel does (the counter's answers are offset by twice a
    kernel parameter), and the other 124 of the 256 from a global counter, first come first served: one atomic per
    fetch, each cluster's last finding none, the answer stored to the cluster's shared memory and its peer CTA's,
    where both producers read it. The flagship's scheduler is static."""
    import gemm_sass

    listing = gemm_sass.read_listing((RECORDS / "gemm_sass_cublas_listing.txt").read_text())
    (kernel, rows), = listing.items()
    assert kernel == "cuBLAS: nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
    executed = gemm_sass.opcodes([rows])
    clusters, cluster_tiles = 132 // 2, (4096 // 128) * (4096 // 256) // 2
    fetched = cluster_tiles - 2 * clusters
    assert executed["ATOMG.E.ADD"] == fetched + clusters  # and each cluster's last fetch finds none left
    assert executed["STAS"] == executed["ATOMG.E.ADD"]  # the answer, to the peer CTA's shared memory
    answers_read = [count for _, count, sass in rows if sass.startswith("LDS") and "0x34490" in sass]
    assert answers_read == [2 * executed["ATOMG.E.ADD"]]  # by the producers of both CTAs
    # per CTA tile and k-step: 2 warpgroups x 4 warps x 8 MMAs (4 per 64x128 accumulator)
    assert executed["HGMMA.64x128x16.F32.BF16"] == 2 * cluster_tiles * 64 * 2 * 4 * 8


def test_stores_per_warpgroup_gain_a_percent_and_do_not_reach_cublas():
    """H100 records of the epilogue candidates (2026-12-07, two calls): the flagship's schedule with each
    consumer warpgroup storing its own rows through four 8 KB buffers (`wgstore4`, now the flagship's 128x256
    epilogue) beats the same schedule with CUTLASS's epilogue (`coop_128x256_c2x1_sw1_even`) in both calls, by graph
    replay and by padded events, and at the power cap; more buffers alone (`store4`) do not; cuBLAS stays ahead, or
    level in a third call with the flagship itself."""
    import gemm_timing_methods as methods

    old, new = "coop_128x256_c2x1_sw1_even", "wgstore4_128x256_c2x1_sw1_even"
    first = _pooled("gemm_epilogue_timing")
    second = methods.pool([json.loads((RECORDS / f"gemm_epilogue_confirm_timing_{i}.json").read_text())
                           for i in (1, 2, 3)])
    for pooled, blocks in ((first, 10), (second, 15)):
        for method in ("graph-flush", "event+pad"):
            assert pooled[f"{new}|{method}"]["blocks"] == blocks
            gain = pooled[f"{new}|{method}"]["x_best_cublas"] / pooled[f"{old}|{method}"]["x_best_cublas"]
            assert 1.005 < gain < 1.02, (method, gain)
    assert first[f"{new}|graph-flush"]["x_best_cublas"] == pytest.approx(1.010, abs=0.001)
    assert second[f"{new}|graph-flush"]["x_best_cublas"] == pytest.approx(0.996, abs=0.001)
    assert second[f"{new}|graph-flush"]["interval"][0] < 1.0  # the target (the interval above 1.0) is not met
    assert first["store4_128x256_c2x1_sw1_even|graph-flush"]["x_best_cublas"] < first[f"{new}|graph-flush"]["x_best_cublas"]
    # the third call, with the flagship built on it (`gemm_bf16`): at cuBLAS's median, not above it in every block
    third = _pooled("gemm_flagship_wgstore_timing")
    flagship = third["gemm_bf16|graph-flush"]
    assert flagship["x_best_cublas"] == pytest.approx(1.001, abs=0.001) and flagship["interval"][0] < 1.0
    assert flagship["x_best_cublas"] > third[f"{old}|graph-flush"]["x_best_cublas"] + 0.01
    sustained = json.loads((RECORDS / "gemm_epilogue_clocks.json").read_text())["sustained"]
    mean = {name: sum(row["tflops"]) / len(row["tflops"]) for name, row in sustained.items()}
    assert all(row["reasons"] == {"0x4": row["samples"]} for row in sustained.values())  # all at the power cap
    assert mean[new] / mean[old] == pytest.approx(1.009, abs=0.002) and mean["cuBLAS"] > mean[new]


def test_warp_samples_show_where_the_flagship_and_cublas_wait():
    """bench/gemm_sass.py's PC samples of one 4096^3 call each (H100): most samples of the flagship's schedules sit
    at the wgmma wait and the MMAs themselves; the epilogue's barriers and store waits hold about 1 % of them,
    with CUTLASS's epilogue or ours."""
    import gemm_sass

    calls = _per_call("gemm_epilogue_sass")
    for name in ("gemm_bf16", "wgstore4_128x256_c2x1_sw1_even"):
        samples = calls[name]["samples"]
        total = sum(sum(r.values()) for r in samples.values())
        share = {op: sum(r.values()) / total for op, r in samples.items()}
        assert share["WARPGROUP.DEPBAR.LE"] + share["HGMMA.64x256x16.F32.BF16"] > 0.6
        assert share["BAR.SYNC.DEFER_BLOCKING"] + share["DEPBAR.LE"] < 0.01
    table = gemm_sass.sample_table(calls)
    assert table.splitlines()[1].startswith("WARPGROUP.DEPBAR.LE") and "samples" in table.splitlines()[-1]


def test_stores_per_warpgroup_gain_at_3072_cubed_too():
    """The flagship's 3072^3 kernel (128x192) with stores per warpgroup (H100, two processes): three buffers 1.5 %
    faster than the same kernel with CUTLASS's epilogue by graph replay, two buffers in between."""
    pooled = _pooled("gemm_epilogue_3072_timing")
    ratio = {name: pooled[f"{name}|graph-flush"]["x_best_cublas"]
             for name in ("coop_128x192_c2x1", "wgstore2_128x192_c2x1", "wgstore3_128x192_c2x1")}
    assert ratio["coop_128x192_c2x1"] < ratio["wgstore2_128x192_c2x1"] < ratio["wgstore3_128x192_c2x1"] < 1.0
    assert ratio["wgstore3_128x192_c2x1"] / ratio["coop_128x192_c2x1"] == pytest.approx(1.015, abs=0.003)


def _runs(record: str, count: int) -> list[dict]:
    return [json.loads((RECORDS / f"{record}_{i}.json").read_text()) for i in range(1, count + 1)]


def test_walking_every_other_tile_backwards_saves_hbm_bytes_and_clock_at_the_power_cap():
    """2026-12-07's H100 records: the flagship's schedule with every other tile's k-loop walked backwards
    (AlternatingK, now the flagship's) reads 128 MB from HBM per 4096^3 call where it read 168 (cuBLAS 150), and at
    the power cap runs a clock step higher and 1.8 % faster than its forward twin, ahead of cuBLAS."""
    first, third = _per_call("gemm_altk_traffic"), _per_call("gemm_flagship_altk_traffic")
    forward, backward = first["wgstore4_128x256_c2x1_sw1_even"], first["altk_wgstore4_128x256_c2x1_sw1_even"]
    assert forward["dram read MB"] == pytest.approx(167.8, abs=0.1)
    assert backward["dram read MB"] == pytest.approx(127.9, abs=0.1)
    assert backward["dram read MB"] < first["cuBLAS"]["dram read MB"]
    assert third["gemm_bf16"]["dram read MB"] == pytest.approx(127.7, abs=0.1)  # the flagship built with it
    assert backward["L2 -> SM MB"] == forward["L2 -> SM MB"]  # the same bytes delivered, in another order
    sustained = json.loads((RECORDS / "gemm_flagship_altk_clocks.json").read_text())["sustained"]
    assert all(row["reasons"] == {"0x4": row["samples"]} for row in sustained.values())  # all at the power cap
    mean = {name: sum(row["tflops"]) / len(row["tflops"]) for name, row in sustained.items()}
    assert mean["gemm_bf16"] / mean["wgstore4_128x256_c2x1_sw1_even"] == pytest.approx(1.018, abs=0.002)
    assert sustained["gemm_bf16"]["sm_mhz"] > sustained["wgstore4_128x256_c2x1_sw1_even"]["sm_mhz"]
    assert mean["gemm_bf16"] > max(mean["cuBLAS"], mean["cuBLAS_out"])


def test_the_flagship_beats_cublas_at_4096_cubed_by_the_interval_of_its_median():
    """Issue 24's target on the H100 records of five calls (18 processes x 10 blocks, each call's machine started
    anew): the flagship (stores per warpgroup, every other tile's k-loop backwards) against the faster cuBLAS call in
    each block. The 95 % interval of the median of the per-process medians lies above 1.0 per call after a flush
    (with and without the pad) and by graph replay; back to back without a flush it reaches down to 1.0. Its forward
    twin beside it holds 1.0 or stays under it. Min..max still holds 1.0 everywhere: single blocks fall either side,
    and by graph replay 3 of the 18 processes read 1.000 or less."""
    import gemm_timing_methods as methods

    runs = (_runs("gemm_flagship_altk_timing", 3) + _runs("gemm_flagship_altk_confirm_timing", 3)
            + _runs("gemm_flagship_altk_repeat_timing", 4) + _runs("gemm_flagship_altks_timing", 3)
            + _runs("gemm_flagship_altk_fifth_timing", 5))
    pooled = methods.pool(runs)
    expected = {"event": (1.004, 1.003), "event+pad": (1.004, 1.002), "graph-flush": (1.006, 1.003)}
    for method, (median, low) in expected.items():
        flagship = pooled[f"gemm_bf16|{method}"]
        assert flagship["blocks"] == 180 and len(flagship["best_run_medians"]) == 18
        assert flagship["x_best_cublas"] == pytest.approx(median, abs=0.0005), method
        assert flagship["best_runs_ci95"][0] == pytest.approx(low, abs=0.0005) and low > 1.0, method
        assert flagship["best_ci95"][0] > 1.0  # over blocks too
        assert flagship["best_interval"][0] < 1.0 < flagship["best_interval"][1]
    assert sum(r <= 1.0 for r in pooled["gemm_bf16|graph-flush"]["best_run_medians"]) == 3
    assert pooled["gemm_bf16|back-to-back"]["best_runs_ci95"][0] == pytest.approx(1.0, abs=0.0005)
    twin_runs = runs[:10] + runs[13:]  # the calls that timed the forward twin beside it
    twin = methods.pool(twin_runs)["wgstore4_128x256_c2x1_sw1_even|graph-flush"]
    assert twin["best_runs_ci95"][0] < 1.0 and twin["x_best_cublas"] < pooled["gemm_bf16|graph-flush"]["x_best_cublas"]
    # the first call alone (three processes: their whole range): by graph replay it held 1.0 there
    first = methods.pool(runs[:3])["gemm_bf16|graph-flush"]
    assert first["best_runs_ci95"] == [0.9995, 1.0074]


def test_the_streamed_operand_hint_saves_little_more():
    """AlternatingKStreamed (A, which no later wave reads again, loaded evict-first) beside the flagship (H100, one
    call): 3 MB fewer HBM reads per 4096^3 call, 0.7 % more TFLOP/s at the power cap, and no gain by the timing
    methods (graph replay 1.005x against the flagship's 1.008x): not adopted."""
    traffic = _per_call("gemm_altks_traffic")
    streamed, flagship = traffic["altks_wgstore4_128x256_c2x1_sw1_even"], traffic["gemm_bf16"]
    assert flagship["dram read MB"] - streamed["dram read MB"] == pytest.approx(3.1, abs=0.1)
    sustained = json.loads((RECORDS / "gemm_altks_clocks.json").read_text())["sustained"]
    mean = {name: sum(row["tflops"]) / len(row["tflops"]) for name, row in sustained.items()}
    assert mean["altks_wgstore4_128x256_c2x1_sw1_even"] / mean["gemm_bf16"] == pytest.approx(1.007, abs=0.001)
    import gemm_timing_methods as methods

    pooled = methods.pool(_runs("gemm_flagship_altks_timing", 3))
    assert (pooled["altks_wgstore4_128x256_c2x1_sw1_even|graph-flush"]["x_best_cublas"]
            < pooled["gemm_bf16|graph-flush"]["x_best_cublas"])


def test_walking_backwards_helps_the_3072_cubed_kernel_too():
    """The flagship's 3072^3 kernel (128x192, stores per warpgroup, even waves) walking every other tile backwards
    (H100, one call, 3 processes x 10 blocks): 49.6 MB from HBM a call against 61.6, and ahead of its forward twin
    by every method; by graph replay its interval lies above 1.0 against cuBLAS, the twin's holds it."""
    import gemm_timing_methods as methods

    traffic = _per_call("gemm_3072_altk_traffic")
    backward, forward = traffic["altk_wgstore3_128x192_c2x1_even"], traffic["wgstore3_128x192_c2x1_even"]
    assert (backward["dram read MB"], forward["dram read MB"]) == (pytest.approx(49.6, abs=0.1),
                                                                  pytest.approx(61.6, abs=0.1))
    pooled = methods.pool(_runs("gemm_3072_altk_timing", 3))
    for method in methods.METHODS:
        assert (pooled[f"altk_wgstore3_128x192_c2x1_even|{method}"]["x_best_cublas"]
                > pooled[f"wgstore3_128x192_c2x1_even|{method}"]["x_best_cublas"]), method
    graph = pooled["altk_wgstore3_128x192_c2x1_even|graph-flush"]
    assert graph["best_runs_ci95"][0] > 1.0 and graph["x_best_cublas"] == pytest.approx(1.004, abs=0.0005)
    assert pooled["wgstore3_128x192_c2x1_even|graph-flush"]["best_runs_ci95"][0] < 1.0
    # built into the flagship (an eighth call, 2 processes): ahead of the forward twin beside it by every method
    flagship = methods.pool(_runs("gemm_flagship_3072_altk_timing", 2))
    for method in methods.METHODS:
        assert (flagship[f"gemm_bf16|{method}"]["x_best_cublas"]
                > flagship[f"wgstore3_128x192_c2x1_even|{method}"]["x_best_cublas"]), method
    assert flagship["gemm_bf16|graph-flush"]["x_best_cublas"] == pytest.approx(1.003, abs=0.0005)
