import assert from "node:assert/strict";
import { test } from "node:test";

import { MessageGate, RecentMessages } from "../../src/core/messages";

test("a message shown by the server is not shown again for the same command", () => {
  let t = 0;
  const m = new RecentMessages(() => t, 1000);
  t = 100;
  m.record("k.cu:  no-problem:\n no paired problem");
  assert.equal(m.shownSince("k.cu: no-problem: no paired problem", 50), true); // whitespace does not matter
  assert.equal(m.shownSince("k.cu: no-problem: no paired problem", 150), false); // shown before the command
  assert.equal(m.shownSince("other", 0), false);
  t = 5000;
  m.record("later");
  assert.equal(m.shownSince("k.cu: no-problem: no paired problem", 0), false); // forgotten
});

test("the gate holds informational messages while commands run and drops what the extension presented", () => {
  const recent = new RecentMessages(() => 0);
  const gate = new MessageGate(recent);
  const shown: string[] = [];
  const offer = (text: string, info = true) => gate.offer(text, info, () => shown.push(text));

  offer("idle message");
  assert.deepEqual(shown, ["idle message"]);

  gate.hold();
  gate.hold(); // two commands at once
  offer("compiled and built · not run: no GPU on this machine");
  offer("k.cu: no-problem: nothing paired");
  offer("the toolchain is missing", false); // a warning: at once
  assert.deepEqual(shown, ["idle message", "the toolchain is missing"]);
  gate.release(["compiled and built · not run: no GPU on this machine"]);
  assert.equal(shown.length, 2); // the other command still runs
  gate.release([undefined]);
  assert.deepEqual(shown, ["idle message", "the toolchain is missing", "k.cu: no-problem: nothing paired"]);
  assert.equal(recent.shownSince("k.cu: no-problem: nothing paired", 0), true);

  gate.hold();
  offer("compiled and built · not run: no GPU on this machine"); // presented earlier, but not by this command
  gate.release();
  assert.equal(shown.at(-1), "compiled and built · not run: no GPU on this machine");
  gate.release(); // unbalanced: harmless
});
