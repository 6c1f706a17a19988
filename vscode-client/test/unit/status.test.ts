import assert from "node:assert/strict";
import { test } from "node:test";

import { StatusModel, activityOf } from "../../src/core/status";

function model() {
  let t = 1_000_000;
  const m = new StatusModel(() => t);
  return { m, tick: (ms: number) => { t += ms; } };
}

test("server commands map to status activities", () => {
  assert.equal(activityOf("cutegen.server.test"), "testing");
  assert.equal(activityOf("cutegen.server.profile"), "profiling");
  assert.equal(activityOf("cutegen.server.optimize"), "optimizing");
  assert.equal(activityOf("cutegen.server.fix"), "fixing");
  assert.equal(activityOf("cutegen.server.restoreBest"), "restoring");
  assert.equal(activityOf("cutegen.server.check"), "checking");
});

test("starting, idle, busy, verdict", () => {
  const { m, tick } = model();
  let changes = 0;
  m.onChange(() => changes++);
  assert.equal(m.view().text, "$(sync~spin) CuTeGen: starting");
  m.setServer("running", "/venv/bin/python");
  assert.equal(m.view().text, "$(circle-large-outline) CuTeGen: idle");
  assert.match(m.view().tooltip, /running \(\/venv\/bin\/python\)/);

  const a = m.begin("checking", "a.cu");
  tick(10);
  const b = m.begin("testing", "b.cu");
  assert.equal(m.busy, true);
  assert.equal(m.view().text, "$(sync~spin) CuTeGen: testing b.cu (+1)");
  tick(2000);
  assert.match(m.view().tooltip, /testing b\.cu \(2 s\)/);
  m.end(b);
  assert.equal(m.view().text, "$(sync~spin) CuTeGen: checking a.cu");
  m.end(a);
  m.end(a); // twice is harmless
  assert.equal(m.busy, false);

  m.setVerdict({ text: "b.cu: pass", level: "ok" });
  assert.deepEqual([m.view().text, m.view().level], ["$(pass) CuTeGen: b.cu: pass", "normal"]);
  m.setVerdict({ text: "a.cu: 1 error", level: "error" });
  assert.deepEqual([m.view().text, m.view().level], ["$(error) CuTeGen: a.cu: 1 error", "error"]);
  assert.match(m.view().tooltip, /Last result: a\.cu: 1 error/);
  m.setVerdict(undefined); // no verdict keeps the last one
  assert.equal(m.view().text, "$(error) CuTeGen: a.cu: 1 error");
  assert.ok(changes >= 7);
});

test("a stopped server ends all activities and says so", () => {
  const { m } = model();
  m.setServer("running");
  m.begin("optimizing", "k.cu");
  m.setServer("failed", "python3: not found");
  assert.equal(m.busy, false);
  assert.deepEqual([m.view().text, m.view().level], ["$(error) CuTeGen: server failed", "error"]);
  assert.match(m.view().tooltip, /failed \(python3: not found\)/);
});

test("long verdicts are shortened", () => {
  const { m } = model();
  m.setServer("running");
  m.setVerdict({ text: "x".repeat(200), level: "warning" });
  const v = m.view();
  assert.equal(v.level, "warning");
  assert.ok(v.text.endsWith("…") && v.text.length < 130);
  // A bench summary fits whole: the status bar shows the line CodeLens, hovers and the CLI show.
  const bench = "softsign.cu: pass · 3.17 ms · 3.32× eager · 1.04× torch.compile · 95 % of HBM peak";
  m.setVerdict({ text: bench, level: "ok" });
  assert.ok(m.view().text.endsWith(bench));
});
