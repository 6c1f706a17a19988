import assert from "node:assert/strict";
import { test } from "node:test";

import {
  PATCH_COMMANDS, REVIEW_COMMAND, SERVER, UI_COMMANDS, baseName, documentArgs, fileOfArgs, fixArgumentsForReview, reviewArguments, reviewTitle,
} from "../../src/core/commands";

test("the palette has the issue's commands, under ids the server does not use", () => {
  const titles = UI_COMMANDS.filter((c) => c.palette).map((c) => `CuTeGen: ${c.title}`);
  for (const want of ["CuTeGen: Optimize", "CuTeGen: Run Tests", "CuTeGen: Profile", "CuTeGen: Tune",
    "CuTeGen: Generate Kernel from Reference", "CuTeGen: Restore Best Version", "CuTeGen: Show Log"]) {
    assert.ok(titles.includes(want), want);
  }
  const serverIds = new Set<string>(Object.values(SERVER));
  for (const c of UI_COMMANDS) {
    assert.ok(!serverIds.has(c.id) && !c.id.startsWith("cutegen.server."), c.id);
    assert.ok(!c.server || serverIds.has(c.server), `${c.id} → ${c.server}`);
  }
  assert.equal(new Set(UI_COMMANDS.map((c) => c.id)).size, UI_COMMANDS.length);
  assert.ok(PATCH_COMMANDS.has(SERVER.fix) && PATCH_COMMANDS.has(SERVER.optimize) && !PATCH_COMMANDS.has(SERVER.test));
});

test("arguments and file names", () => {
  assert.deepEqual(documentArgs("file:///k.cu", 4), [{ uri: "file:///k.cu", version: 4 }]);
  assert.deepEqual(documentArgs("file:///k.cu", null), [{ uri: "file:///k.cu" }]);
  assert.equal(fileOfArgs(["file:///w/my%20kernel.cu", {}]), "my kernel.cu"); // the code action's form
  assert.equal(fileOfArgs([{ uri: "file:///w/k.cu", version: 1 }]), "k.cu");
  assert.equal(fileOfArgs([{ textDocument: { uri: "file:///w/t.cu" } }]), "t.cu");
  assert.equal(fileOfArgs([]), undefined);
  assert.equal(fileOfArgs([{ id: "p" }]), undefined);
  assert.equal(baseName("C:\\w\\k.cu"), "k.cu");
  assert.equal(baseName("file:///w/k.cu?x=1#L3"), "k.cu");
});

test("a quick fix that applies a verified patch is reviewed first, through fix", () => {
  const data = { code: "cute-static-assert", line: 12, root: "Dynamic owning tensors not supported" };
  const review = reviewArguments([{ id: "p1", uri: "file:///k.cu", version: 3 }], data);
  assert.deepEqual(review, [{ id: "p1", uri: "file:///k.cu", version: 3, diagnostic: data }]);
  assert.deepEqual(fixArgumentsForReview(review), [{ uri: "file:///k.cu", version: 3, diagnostic: data }]);
  assert.deepEqual(reviewArguments([{ id: "p1", uri: "file:///k.cu" }], undefined), [{ id: "p1", uri: "file:///k.cu" }]);
  assert.deepEqual(fixArgumentsForReview([{ uri: "file:///k.cu", version: "x" }]), [{ uri: "file:///k.cu" }]);
  assert.equal(fixArgumentsForReview(["file:///k.cu"]), undefined);
  assert.equal(fixArgumentsForReview([{ id: "p" }]), undefined);
  assert.deepEqual(reviewArguments(["file:///k.cu"], data), ["file:///k.cu"]);
  assert.equal(REVIEW_COMMAND.startsWith("cutegen.server."), false);
});

test("the quick fix's title says it opens a review", () => {
  assert.equal(reviewTitle("CuTeGen: apply verified fix (compiled, not run)"), "CuTeGen: review and apply verified fix (compiled, not run)");
  assert.equal(reviewTitle("Other: apply x"), "Other: apply x");
});
