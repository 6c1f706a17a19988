"""Energy per call (harness/energy.py): the arithmetic on numbers, the reasons a person reads where NVML is
missing, and the figure as records and the CLI show it. NVML itself is read by tests/gpu/test_energy_gpu.py."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from cutegen.harness import energy
from cutegen.harness.energy import Unmeasured, Window

HAS_PYNVML = importlib.util.find_spec("pynvml") is not None


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def test_the_update_period_is_the_median_gap_between_changes():
    # one late poll (a 31 ms gap) does not move it
    assert energy.update_period([0.0, 0.010, 0.020, 0.051, 0.060, 0.070]) == pytest.approx(0.010)
    with pytest.raises(Unmeasured, match="energy not measured: the energy counter did not change"):
        energy.update_period([0.5])


def test_a_window_spans_twenty_updates_within_its_bounds():
    assert energy.window_seconds(0.010) == pytest.approx(0.22)  # 22 updates: a lead-in, then the span's 21
    assert energy.window_seconds(0.0005) == energy.WINDOW_FLOOR_S
    assert energy.window_seconds(0.100) == energy.WINDOW_CAP_S  # a slow counter: fewer updates, a wider interval


def test_the_host_keeps_ten_ms_of_calls_queued():
    assert energy.in_flight(0.040) == 250
    assert energy.in_flight(2.0) == 5
    assert energy.in_flight(50.0) == 2


def test_a_window_is_power_between_two_updates_times_gpu_time_per_call():
    # 700 W for 0.2 s between the first and the last change: 140 J; 1000 calls in 210 ms of GPU time
    w = energy.window([(1.0, 5_000_000), (1.1, 5_070_000), (1.2, 5_140_000)], gpu_ms=210.0, calls=1000,
                      sm_mhz=[1980, 1970], sampled_watts=[690.0])
    assert w.watts == pytest.approx(700.0)
    assert w.call_ms == pytest.approx(0.21)
    assert w.j_per_call == pytest.approx(0.147)


@pytest.mark.parametrize("changes, gpu_ms, calls, says", [
    ([(1.0, 10)], 5.0, 10, "changed fewer than twice"),
    ([(1.0, 10), (1.0, 20)], 5.0, 10, "changed fewer than twice"),
    ([(1.0, 20), (1.1, 10)], 5.0, 10, "went backwards"),
    ([(1.0, 10), (1.1, 20)], 0.0, 0, "ran no call"),
])
def test_a_window_that_cannot_say_is_unmeasured_never_zero(changes, gpu_ms, calls, says):
    with pytest.raises(Unmeasured, match=says):
        energy.window(changes, gpu_ms, calls)


def test_the_summary_is_the_median_window_with_its_interval():
    windows = [Window(600.0 + d, 0.1, [1980.0], [601.0]) for d in (-6, -3, 0, 3, 30)]  # one window ran hot
    e = energy.summary(windows, period_s=0.02)
    assert e.j_per_call == pytest.approx(0.060)  # the median is not pulled by the hot window
    assert (e.low_j, e.high_j) == pytest.approx((0.0594, 0.063))  # 5 windows: the whole range (95 % needs 6+)
    assert e.windows == 5 and e.period_ms == pytest.approx(20.0) and e.sm_mhz == pytest.approx(1980.0)
    assert e.watts == pytest.approx(604.8) and e.sampled_watts == pytest.approx(601.0)
    assert e.spread == pytest.approx((0.063 - 0.0594) / 0.060)
    with pytest.raises(Unmeasured, match="no window"):
        energy.summary([], 0.02)


@pytest.mark.skipif(HAS_PYNVML, reason="pynvml is installed here")
def test_without_the_package_the_reason_names_it():
    with pytest.raises(Unmeasured) as e:
        energy._open(object())
    assert str(e.value) == "energy not measured: the nvidia-ml-py package (pynvml) is not installed"


@pytest.mark.skipif(_cuda(), reason="a CUDA device is present")
def test_the_judge_reports_why_instead_of_a_figure_without_a_gpu():
    from cutegen.harness.gpu_checks import _energy

    calls = []
    assert _energy(lambda: calls.append(1), call_ms=0.1) == {"energy_unmeasured": "energy not measured: no CUDA device"}
    assert not calls  # nothing was run for a figure that cannot be read


def test_a_record_carries_the_energy_and_reads_it_back(tmp_path):
    from cutegen import records

    e = energy.summary([Window(612.0, 0.095, [1980.0], []) for _ in range(5)], period_s=0.02)
    payload = {"verdict": "pass", "message": "ok", "trials": 1, "energy": e.to_json(),
               "timing": {"median_ms": 0.0931, "p10_ms": 0.093, "p90_ms": 0.094, "spread": 0.01, "trials": 320}}
    done = records.Recorder(tmp_path, "bench", str(tmp_path / "k.cu"), payload).finish("pass", "correct")
    back = records.read(records.latest_path(tmp_path, str(tmp_path / "k.cu"), "bench"))
    assert back.energy == done.energy == e
    assert back.summary() == "pass · 0.0931 ms · 58.1 mJ/call"
    assert back.energy_text() == ("energy 58.1 mJ/call [58.1 mJ–58.1 mJ] · 612 W · SM 1980 MHz · 5 windows, "
                                  "counter updated every 20 ms")
    assert "energy" not in back.to_json()  # rides in details: cutegen 0.3's RunRecord(**d) takes no new field
    assert back.to_json()["details"]["energy"] == e.to_json()


def test_older_records_have_no_energy_and_say_nothing_about_it():
    from cutegen import records

    old = records.read(Path(__file__).resolve().parents[1] / "records" / "h200" / "softsign-bench.json")
    assert old.energy is None and old.energy_text() is None and "J/call" not in old.summary()


def test_an_unmeasured_run_tells_the_person_why(tmp_path, capsys):
    from cutegen import records
    from cutegen.cli import present

    payload = {"timing": {"median_ms": 1.5, "p10_ms": 1.4, "p90_ms": 1.6, "spread": 0.13, "trials": 50},
               "energy_unmeasured": "energy not measured: no CUDA device"}
    r = records.Recorder(tmp_path, "bench", str(tmp_path / "k.cu"), payload).finish("pass", "correct")
    assert r.energy is None and r.summary() == "pass · 1.5 ms"
    present.verdict(r, _Quiet())
    assert "  energy not measured: no CUDA device\n" in capsys.readouterr().out


def test_joules_read_in_the_unit_that_fits():
    from cutegen.records import joules_text

    assert joules_text(1.214) == "1.21 J"
    assert joules_text(0.0583) == "58.3 mJ"
    assert joules_text(0.000412) == "412 µJ"
    assert not math.isnan(float(joules_text(0.0583).split()[0]))


class _Quiet:
    def print(self, *args, **kwargs) -> None:
        pass
