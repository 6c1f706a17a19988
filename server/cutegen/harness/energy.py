"""Energy per call, measured in the judge from NVML's total-energy counter (docs/energy.md).

How. `nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded; Volta and later) updates coarsely and at
an undocumented period, so the period is measured at run time (the counter polled until it has changed a few
times) and a call's energy is never read around one call or one timing block (2 ms, timing.py): each window
repeats the timed function back to back for at least MIN_PERIODS updates (capped at WINDOW_CAP_S). Inside a
window the counter is polled while the host waits for the GPU (within 1/2000 of a window's span); two changes it
shows, the second after the window started (the first is a lead-in, in case a reading lags its update) and the
last, both fall while the GPU is busy with the calls, so their difference over the host time between them is the
board's mean power under this load, with no idle head or tail in it and no quantization (both ends are updates).
J/call = that power × the GPU time per call in the window (CUDA events around the window's calls ÷ calls).
The windows' J/call give the median and its 95 % interval (intervals.py).

What is in a call's joules. The window runs the calls as timing.py's rounds do (the same function, the same
rotated inputs) but without an L2 flush between them: a flush's energy would dominate a short kernel's and could
only be taken off as a separately measured figure. A kernel whose inputs fit L2 therefore reads some of them warm
here. A kernel judged in a candidate process (remote.py) is called through the hand-off between the two
processes' streams (~0.28 ms on an H100): the GPU is partly idle then, at the clocks the load keeps, and that
energy is in every call's share; timing.py takes the hand-off's *time* off each call (calibrated without the
candidate's code), but its energy is not subtracted, because nothing measures it apart from the call. So J/call
through the judge is an upper bound on the kernel's own; candidates of one kernel carry the same hand-off, so
their comparison (agent/objective.py) stays fair, only less sensitive for kernels far shorter than the hand-off.
The counter is the whole board's: another process's work on the same GPU is counted too.

Where NVML is missing (the nvidia-ml-py package, a driver, a CUDA device, a counter that is not supported) the
figure is absent and `Unmeasured` carries one line for a person: "energy not measured: ...", never a zero."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from cutegen.harness.intervals import median_interval
from cutegen.records import Energy  # the record's type: what is measured is what is stored

MIN_PERIODS = 20  # counter updates per window: each window averages the power over many of its readings
WINDOW_FLOOR_S = 0.1  # a window lasts at least this long, however fast the counter updates
WINDOW_CAP_S = 0.5  # and at most this long (a slower counter gets fewer updates per window, said in period_ms)
WINDOWS = 5  # under 6 the interval is the windows' whole range (intervals.median_interval): wider, never narrower
IN_FLIGHT_MS = 10.0  # GPU work the host keeps queued ahead of it: enough that host jitter never idles the GPU
PERIOD_CHANGES = 6  # counter changes watched to measure its period
PERIOD_TIMEOUT_S = 2.0  # no change in this long: the counter is not usable here
PREFIX = "energy not measured: "


class Unmeasured(Exception):
    """Why there is no energy figure: str(e) is the one line a person reads ('energy not measured: ...')."""

    def __init__(self, why: str):
        super().__init__(PREFIX + why)


# -- the arithmetic (pure: tested on numbers) ----------------------------------------------------------------------

def update_period(change_times: list[float]) -> float:
    """The counter's update period (s): the median gap between the host times at which it was seen to change."""
    gaps = [b - a for a, b in zip(change_times, change_times[1:]) if b > a]
    if not gaps:
        raise Unmeasured("the energy counter did not change while it was watched")
    return statistics.median(gaps)


def window_seconds(period_s: float) -> float:
    """How long one window runs: MIN_PERIODS updates plus two (the first change is a lead-in, the second opens the
    span), within bounds."""
    return min(WINDOW_CAP_S, max(WINDOW_FLOOR_S, (MIN_PERIODS + 2) * period_s))


def in_flight(call_ms: float) -> int:
    """Calls the host keeps queued ahead of the GPU: IN_FLIGHT_MS of work, at least 2."""
    return max(2, math.ceil(IN_FLIGHT_MS / max(call_ms, 1e-3)))


@dataclass
class Window:
    """One window's figures: the board's mean power over the counter's span and the GPU time per call."""

    watts: float
    call_ms: float
    sm_mhz: list[float]
    sampled_watts: list[float]

    @property
    def j_per_call(self) -> float:
        return self.watts * self.call_ms / 1e3


def window(changes: list[tuple[float, int]], gpu_ms: float, calls: int, sm_mhz: list[float] | None = None,
           sampled_watts: list[float] | None = None) -> Window:
    """A window from the counter's changes seen during it ((host s, mJ), in order) and its calls' GPU time."""
    if len(changes) < 2 or changes[-1][0] <= changes[0][0]:
        raise Unmeasured("the energy counter changed fewer than twice during a window")
    if calls < 1 or gpu_ms <= 0:
        raise Unmeasured("a window ran no call")
    (t0, e0), (t1, e1) = changes[0], changes[-1]
    if e1 < e0:
        raise Unmeasured("the energy counter went backwards (the driver was reloaded)")
    return Window((e1 - e0) / 1e3 / (t1 - t0), gpu_ms / calls, list(sm_mhz or []), list(sampled_watts or []))


def summary(windows: list[Window], period_s: float) -> Energy:
    """The windows as the record's Energy: the median J/call and its interval, mean power, clock and call time."""
    if not windows:
        raise Unmeasured("no window was measured")
    per_call = [w.j_per_call for w in windows]
    low, high = median_interval(per_call)
    clocks = [c for w in windows for c in w.sm_mhz]
    sampled = [p for w in windows for p in w.sampled_watts]
    return Energy(j_per_call=statistics.median(per_call), low_j=low, high_j=high,
                  watts=statistics.fmean(w.watts for w in windows), sm_mhz=statistics.fmean(clocks) if clocks else None,
                  windows=len(windows), call_ms=statistics.median(w.call_ms for w in windows),
                  period_ms=period_s * 1e3, sampled_watts=statistics.fmean(sampled) if sampled else None)


# -- NVML ----------------------------------------------------------------------------------------------------------

class Meter:
    """NVML's counters for the GPU this process's CUDA device is. Found by UUID, then PCI bus id, never by index:
    CUDA_VISIBLE_DEVICES renumbers devices, NVML does not."""

    def __init__(self, nvml, handle):
        self.nvml, self.handle = nvml, handle
        self.period_s: float | None = None

    def energy_mj(self) -> int:
        return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))

    def sm_mhz(self) -> float:
        return float(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))

    def power_w(self) -> float:
        return self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1e3

    def period(self) -> float:
        """The counter's update period, measured once per process (polled until it changed PERIOD_CHANGES times)."""
        if self.period_s is None:
            times: list[float] = []
            last = self.energy_mj()
            deadline = time.perf_counter() + PERIOD_TIMEOUT_S
            while len(times) < PERIOD_CHANGES and time.perf_counter() < deadline:
                now = self.energy_mj()
                if now != last:
                    times.append(time.perf_counter())
                    last = now
            if len(times) < 3:
                raise Unmeasured(f"the energy counter changed {len(times)} times in {PERIOD_TIMEOUT_S:.0f} s")
            self.period_s = update_period(times)
        return self.period_s


_METERS: dict[str, Meter | str] = {}


def meter(device_index: int | None = None) -> Meter:
    """The Meter of the current CUDA device (opened once per process), or Unmeasured saying why not."""
    try:
        import torch
    except ImportError:
        raise Unmeasured("PyTorch is not installed") from None
    if not torch.cuda.is_available():
        raise Unmeasured("no CUDA device")
    index = torch.cuda.current_device() if device_index is None else device_index
    props = torch.cuda.get_device_properties(index)
    key = str(getattr(props, "uuid", index))
    if key not in _METERS:
        try:
            _METERS[key] = _open(props)
        except Unmeasured as e:
            _METERS[key] = str(e)
    found = _METERS[key]
    if isinstance(found, str):
        raise Unmeasured(found.removeprefix(PREFIX))
    return found


def _open(props) -> Meter:
    try:
        import pynvml
    except ImportError:
        raise Unmeasured("the nvidia-ml-py package (pynvml) is not installed") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        raise Unmeasured(f"NVML did not start ({e}): no NVIDIA driver, or no access to it") from None
    handle = None
    for how in _handles(pynvml, props):
        try:
            handle = how()
            break
        except pynvml.NVMLError:
            continue
    if handle is None:
        raise Unmeasured(f"NVML does not know this CUDA device ({props.name}) by its UUID or PCI bus id")
    try:
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except pynvml.NVMLError as e:
        raise Unmeasured(f"this GPU's total-energy counter cannot be read ({e}; it needs Volta or later, and not "
                         "a MIG instance)") from None
    return Meter(pynvml, handle)


def _handles(pynvml, props) -> list[Callable]:
    """Ways to find the NVML handle of the device torch describes in `props`, best first."""
    out = []
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        text = str(uuid)
        text = text if text.startswith(("GPU-", "MIG-")) else f"GPU-{text}"  # torch prints it without NVML's prefix
        out.append(lambda: pynvml.nvmlDeviceGetHandleByUUID(text))
    if getattr(props, "pci_bus_id", None) is not None:
        domain, device = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
        bus = f"{domain:08X}:{props.pci_bus_id:02X}:{device:02X}.0"
        out.append(lambda: pynvml.nvmlDeviceGetHandleByPciBusId(bus))
    return out


# -- measuring (in the judge, on the GPU) -----------------------------------------------------------------------

def measure(fn: Callable[[], object], *, call_ms: float, windows: int = WINDOWS) -> Energy:
    """J/call of `fn` (one call as timing.py times it) in `windows` windows on the current CUDA stream. Raises
    Unmeasured where NVML cannot say."""
    m = meter()
    try:
        period = m.period()
        seconds = window_seconds(period)
        depth = in_flight(call_ms)
        return summary([_window(fn, m, seconds, period, depth) for _ in range(windows)], period)
    except m.nvml.NVMLError as e:  # a reading that failed midway is no figure, and no failed verdict either
        raise Unmeasured(f"an NVML reading failed ({e})") from None


def _window(fn, m: Meter, seconds: float, period: float, depth: int) -> Window:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    marks = [torch.cuda.Event() for _ in range(depth)]
    watch = _Watch(m, poll_s=min(1e-3, max(5e-5, period / 100)))  # a change seen within 1/2000 of a window's span
    start.record()
    deadline = time.perf_counter() + seconds + PERIOD_TIMEOUT_S  # a counter that stops moving ends the window
    calls = 0
    while not watch.spans(seconds - 2 * period) and time.perf_counter() < deadline:
        mark = marks[calls % depth]
        while not mark.query():  # the call `depth` back is not done: the queue stays within IN_FLIGHT_MS
            watch.poll()  # the host waits here, so it watches the counter here (an unrecorded event is done)
        fn()
        mark.record()
        calls += 1
        watch.poll()
    end.record()
    end.synchronize()
    return window(watch.changes[1:], start.elapsed_time(end), calls, watch.clocks, watch.watts)


class _Watch:
    """The counter's changes as the host sees them (host time just after the read that saw one), with the SM clock
    and NVML's power reading sampled at each change. Polled at most every `poll_s`: an NVML read is an ioctl."""

    def __init__(self, m: Meter, poll_s: float):
        self.m, self.poll_s = m, poll_s
        self.changes: list[tuple[float, int]] = []
        self.clocks: list[float] = []
        self.watts: list[float] = []
        self.last, self.polled = m.energy_mj(), time.perf_counter()

    def poll(self) -> None:
        if time.perf_counter() - self.polled < self.poll_s:
            return
        energy = self.m.energy_mj()
        self.polled = time.perf_counter()
        if energy != self.last:
            self.changes.append((self.polled, energy))
            self.last = energy
            for samples, read in ((self.clocks, self.m.sm_mhz), (self.watts, self.m.power_w)):
                try:  # side readings: a card that lacks one still gets its J/call
                    samples.append(read())
                except self.m.nvml.NVMLError:
                    pass

    def spans(self, seconds: float) -> bool:
        """Whether the changes seen so far span `seconds` from the second: the first one after the window started
        is a lead-in, because a reading may lag its update a little (by less than a period, we assume), and the
        span must not reach back before the GPU was busy."""
        return len(self.changes) > 1 and self.changes[-1][0] - self.changes[1][0] >= seconds
