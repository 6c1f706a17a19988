import assert from "node:assert/strict";
import { test } from "node:test";

import {
  describePatch, diagnosticsVerdict, formatFigures, humanize, messageOf, patchOf, typingVerdict, verdictOf, wasCancelled,
} from "../../src/core/results";

const reply = {
  patch: {
    uri: "file:///w/k.cu", version: 3, diff: "--- a\n+++ b\n", new_text: "int main() {}\n",
    verified: "compiled and built · not run: no GPU on this machine", figures: { speedup: 1.8432, median_ms: 3.2123 }, id: "p1",
  },
};

test("patchOf reads the server's patch", () => {
  const p = patchOf(reply)!;
  assert.equal(p.id, "p1");
  assert.equal(p.uri, "file:///w/k.cu");
  assert.equal(p.version, 3);
  assert.equal(p.newText, "int main() {}\n");
  assert.equal(p.verified, "compiled and built · not run: no GPU on this machine");
  assert.deepEqual(p.figures, ["1.84× faster", "median 3.21 ms"]);
});

test("patchOf rejects replies without a usable patch", () => {
  assert.equal(patchOf(undefined), undefined);
  assert.equal(patchOf({ message: "The agent is not configured" }), undefined);
  assert.equal(patchOf({ patch: { uri: "file:///k.cu" } }), undefined); // no text
  assert.equal(patchOf({ patch: { new_text: "x" } }), undefined); // no file
  assert.equal(patchOf({ patch: "diff" }), undefined);
});

test("patchOf fills what the server left out", () => {
  const p = patchOf({ patch: { uri: "file:///k.cu", newText: "x", id: 7 } })!;
  assert.equal(p.id, "7");
  assert.equal(p.version, null);
  assert.equal(p.verified, "not verified");
  assert.deepEqual(p.figures, []);
  const a = patchOf({ patch: { uri: "file:///k.cu", new_text: "x" } })!;
  const b = patchOf({ patch: { uri: "file:///k.cu", new_text: "y" } })!;
  assert.match(a.id, /^local-/);
  assert.notEqual(a.id, b.id);
});

test("figures in every shape the server may send", () => {
  assert.deepEqual(formatFigures("2.1× vs eager"), ["2.1× vs eager"]);
  assert.deepEqual(formatFigures(["a", "b"]), ["a", "b"]);
  assert.deepEqual(formatFigures({ bandwidth_tbs: 3.987654, verdict: "pass", none: null }),
    ["bandwidth (TB/s): 3.99", "verdict: pass"]);
  // The agent's verification figures: known ones read well, bookkeeping is left out.
  assert.deepEqual(formatFigures({
    gpu: false, check_s: 2.94, check_cached: false, build_s: 9.17, build_cached: true, rounds: 1, tiers: ["check", "build"],
  }), ["check 2.9 s", "build 9.2 s (cached)", "1 round"]);
  assert.deepEqual(formatFigures({ median_ms: 3.4567, spread: 0.012, gb_per_s: 3790.2, baseline_ms: 6.1, speedup: 1.7647,
    timing_trials: 100, test_s: 4.2, notes: ["a", "b"] }),
  ["1.76× faster", "median 3.46 ms", "before 6.1 ms", "3790 GB/s", "test 4.2 s", "spread: 0.012", "notes: a, b"]);
  assert.deepEqual(formatFigures({ time: { value: 0.51234, unit: "ms" } }), ["time: 0.512 ms"]);
  assert.deepEqual(formatFigures([{ name: "regs", value: 32 }]), ["regs: 32"]);
  assert.deepEqual(formatFigures(null), []);
  assert.deepEqual(formatFigures(""), []);
  assert.deepEqual(formatFigures(42), ["42"]);
});

test("humanize", () => {
  assert.equal(humanize("maxAbsError"), "max abs error");
  assert.equal(humanize("median_ms"), "median (ms)");
  assert.equal(humanize("regs"), "regs");
});

test("verdicts for the status bar", () => {
  // The server sends each run's summary and level (from its verdict enum): the status bar shows them as they are.
  const bench = "pass · 3.17 ms · 3.32× eager · 1.04× torch.compile · 95 % of HBM peak";
  assert.deepEqual(verdictOf("cutegen.server.test", "k.cu", { ok: true, verdict: "pass", summary: bench, level: "ok", message: "" }),
    { text: `k.cu: ${bench}`, level: "ok" });
  assert.deepEqual(verdictOf("cutegen.server.test", "k.cu", { ok: false, verdict: "mismatch", summary: "mismatch · tail (296 of 3,146,024 wrong)", level: "error" }),
    { text: "k.cu: mismatch · tail (296 of 3,146,024 wrong)", level: "error" });
  assert.deepEqual(verdictOf("cutegen.server.test", "k.cu", { ok: false, verdict: "not-run", summary: "not-run", level: "info" }), { text: "k.cu: not-run", level: "info" });
  assert.equal(verdictOf("cutegen.server.profile", "k.cu", { ok: true, verdict: "profiled", summary: "profiled · memory-bound", level: "ok" })!.text, "k.cu: profiled · memory-bound");
  // An older server without levels: a verdict it does not explain is not shown as a pass.
  assert.equal(verdictOf("cutegen.server.test", "k.cu", { ok: false, verdict: "mismatch" })!.level, "error");
  assert.deepEqual(verdictOf("cutegen.server.check", "k.cu", { ok: false, errors: 2, message: "2 error(s)" }),
    { text: "k.cu: 2 errors", level: "error" });
  assert.deepEqual(verdictOf("cutegen.server.check", "k.cu", { ok: true, errors: 0 }), { text: "k.cu: compiles", level: "ok" });
  assert.equal(verdictOf("cutegen.server.fix", "k.cu", reply)!.text,
    "k.cu: patch proposed (compiled and built · not run: no GPU on this machine)");
  assert.equal(verdictOf("cutegen.server.check", "k.cu", { ok: false, cancelled: true, message: "x" })!.text, "k.cu: cancelled");
  assert.equal(verdictOf("cutegen.server.applyPatch", "k.cu", { applied: true, message: "" })!.level, "ok");
  assert.equal(verdictOf("cutegen.server.applyPatch", "k.cu", { applied: false, message: "stale" })!.level, "warning");
  assert.deepEqual(verdictOf("cutegen.server.fix", "k.cu", { ok: false, message: "The agent is not configured.\nmore" }),
    { text: "k.cu: The agent is not configured.", level: "warning" });
  assert.equal(verdictOf("cutegen.server.profile", "k.cu", null), undefined);
  assert.equal(verdictOf("cutegen.server.profile", "k.cu", {}), undefined);
});

test("diagnostics verdicts", () => {
  assert.deepEqual(diagnosticsVerdict("k.cu", 1, 3), { text: "k.cu: 1 error", level: "error" });
  assert.deepEqual(diagnosticsVerdict("k.cu", 0, 2), { text: "k.cu: 2 warnings", level: "warning" });
  assert.deepEqual(diagnosticsVerdict("k.cu", 0, 0), { text: "k.cu: compiles", level: "ok" });
});

test("diagnostics of unsaved text never say the file compiles: nvcc has not seen it", () => {
  assert.deepEqual(typingVerdict("k.cu", 2, 0), { text: "k.cu: 2 errors while typing", level: "error" });
  assert.deepEqual(typingVerdict("k.cu", 0, 1), { text: "k.cu: 1 warning while typing", level: "warning" });
  assert.deepEqual(typingVerdict("k.cu", 0, 0), { text: "k.cu: no errors while typing (unsaved)", level: "info" });
});

test("messages and cancellation", () => {
  assert.equal(messageOf({ message: "hi" }), "hi");
  assert.equal(messageOf({ message: 3 }), undefined);
  assert.equal(wasCancelled({ cancelled: true }), true);
  assert.equal(wasCancelled({ cancelled: "yes" }), false);
});

test("describePatch says what was verified and the figures", () => {
  const text = describePatch(patchOf(reply)!, "k.cu");
  assert.equal(text, "CuTeGen proposes a change to k.cu. Verified: compiled and built · not run: no GPU on this machine. " +
    "Measured: 1.84× faster · median 3.21 ms.");
  const bare = describePatch(patchOf({ patch: { uri: "file:///k.cu", new_text: "" } })!, "k.cu");
  assert.equal(bare, "CuTeGen proposes a change to k.cu. Verified: not verified.");
});

test("an explanation in the status bar: plain text, and never a green check on a file that has an error", () => {
  const md = "**Copy between tensors of different rank** — `cute::copy` needs a `src` and a `dst` of one rank.\n\n" +
    "**Fix**: partition both with the same [TiledCopy](https://example.org).";
  const explained = verdictOf("cutegen.server.diagnose", "k.cu", { ok: true, message: md, diagnosis: md, source: "knowledge" })!;
  assert.equal(explained.text, "k.cu: explained: Copy between tensors of different rank — cute::copy needs a src and a dst of…");
  assert.equal(explained.level, "info");
  assert.ok(!/[*`]/.test(explained.text));
  // any reply's message reaches the status bar without its Markdown
  assert.equal(verdictOf("cutegen.server.optimize", "k.cu", { ok: false, message: "**No** faster `variant`: see [the log](x)" })!.text,
    "k.cu: No faster variant: see the log");
});
