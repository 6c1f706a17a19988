import assert from "node:assert/strict";
import { test } from "node:test";

import { CANCEL_COMMAND, LoopStatus, parseLoopEvent } from "../../src/core/loop";
import { StatusModel } from "../../src/core/status";

const URI = "file:///ws/softsign.cu";

function event(fields: Record<string, unknown>) {
  const e = parseLoopEvent({ uri: URI, file: "softsign.cu", version: 3, summary: "", level: "info", regression: null,
    token: "cutegen-1", ...fields });
  assert.ok(e, `unusable: ${JSON.stringify(fields)}`);
  return e;
}

function setup() {
  const status = new StatusModel(() => 1_000_000);
  status.setServer("running");
  return { status, loop: new LoopStatus(status) };
}

test("a run's stages show as activities, each figure as the verdict, and a click cancels while it runs", () => {
  const { status, loop } = setup();
  loop.onEvent(event({ stage: "test", state: "running" }));
  assert.equal(status.view().text, "$(sync~spin) CuTeGen: testing softsign.cu");
  assert.equal(status.view().command, CANCEL_COMMAND);
  assert.match(status.view().tooltip, /Click to cancel testing softsign\.cu/);
  assert.equal(loop.token(), "cutegen-1");
  loop.onEvent(event({ stage: "test", state: "done", summary: "pass · 5 trials", level: "ok" }));
  loop.onEvent(event({ stage: "time", state: "running" }));
  assert.equal(status.view().text, "$(sync~spin) CuTeGen: timing softsign.cu");
  loop.onEvent(event({ stage: "time", state: "done", summary: "pass · 3.13 ms · 3.35× eager", level: "ok" }));
  loop.onEvent(event({ stage: "profile", state: "running" }));
  loop.onEvent(event({ stage: "profile", state: "done", summary: "profiled · memory-bound", level: "ok" }));
  loop.onEvent(event({ state: "idle", level: "ok" }));
  assert.equal(status.busy, false);
  assert.equal(status.view().text, "$(pass) CuTeGen: softsign.cu: profile: profiled · memory-bound");
  assert.equal(status.view().command, "cutegen.showLog");
  assert.equal(loop.token(), undefined);
});

test("a regression says so, coloured, and an edit marks it stale", () => {
  const { status, loop } = setup();
  loop.onEvent(event({ stage: "time", state: "done", summary: "pass · 4.7 ms", level: "ok" }));
  loop.onEvent(event({ state: "idle", level: "warning", regression: "slower than the last passing version: 3.1 → 4.7 ms" }));
  assert.deepEqual([status.view().text, status.view().level],
    ["$(warning) CuTeGen: softsign.cu: slower than the last passing version: 3.1 → 4.7 ms", "warning"]);
  loop.changed(URI, 3); // the version the figure is about: not stale
  assert.doesNotMatch(status.view().text, /stale/);
  loop.changed("file:///ws/other.cu", 9);
  assert.doesNotMatch(status.view().text, /stale/);
  loop.changed(URI, 4);
  assert.match(status.view().text, /3\.1 → 4\.7 ms \(stale\)$/);
  assert.match(status.view().tooltip, /stale: the file changed since/);

  loop.onEvent(event({ stage: "test", state: "done", summary: "mismatch · tail (296 of 3,146,024 wrong)", level: "error" }));
  loop.onEvent(event({ state: "idle", level: "error", regression: "was pass, now mismatch · tail (296 of 3,146,024 wrong)" }));
  assert.deepEqual([status.view().text, status.view().level],
    ["$(error) CuTeGen: softsign.cu: was pass, now mismatch · tail (296 of 3,146,024 wrong)", "error"]);
});

test("stopped by a newer save, cancelled, and off without a GPU (the check's verdict stays)", () => {
  const { status, loop } = setup();
  loop.onEvent(event({ stage: "profile", state: "running" }));
  loop.onEvent(event({ state: "stopped" }));
  assert.equal(status.busy, false);
  assert.equal(status.view().text, "$(circle-large-outline) CuTeGen: idle"); // the newer run says what it finds
  loop.onEvent(event({ stage: "test", state: "running", token: "cutegen-2" }));
  assert.equal(loop.token(), "cutegen-2");
  loop.onEvent(event({ state: "cancelled" }));
  assert.equal(status.view().text, "$(info) CuTeGen: softsign.cu: background run cancelled");
  status.setVerdict({ text: "softsign.cu: compiles", level: "ok" });
  loop.onEvent(event({ state: "off", summary: "no GPU: testing on save is off" }));
  assert.equal(status.view().text, "$(pass) CuTeGen: softsign.cu: compiles"); // the server's message says it, once
});

test("notifications that do not fit are ignored, odd fields read safely", () => {
  assert.equal(parseLoopEvent(null), undefined);
  assert.equal(parseLoopEvent("running"), undefined);
  assert.equal(parseLoopEvent({ uri: URI }), undefined);
  assert.equal(parseLoopEvent({ uri: URI, state: "exploded" }), undefined);
  const odd = parseLoopEvent({ uri: URI, state: "done", stage: "compile", level: 7, version: "3", summary: ["x"] });
  assert.deepEqual(odd && [odd.file, odd.stage, odd.level, odd.version, odd.summary, odd.token],
    ["softsign.cu", null, "info", null, "", null]);
  const { status, loop } = setup();
  loop.onEvent(odd!); // a "done" without a stage changes nothing
  assert.equal(status.view().text, "$(circle-large-outline) CuTeGen: idle");
});
