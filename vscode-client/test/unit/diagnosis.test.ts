import assert from "node:assert/strict";
import { test } from "node:test";

import { diagnosisDocument, diagnosisOf, diagnosisPath } from "../../src/core/diagnosis";

const MD = "**Dynamic owning tensors not supported (register tensor sized at run time)**\n\nBefore:\n```cpp\nx\n```";

test("diagnosisOf reads the diagnose command's Markdown, and nothing else's", () => {
  const reply = { ok: true, message: MD, diagnosis: MD, source: "knowledge" };
  assert.deepEqual(diagnosisOf("cutegen.server.diagnose", reply), { markdown: MD, source: "knowledge" });
  assert.equal(diagnosisOf("cutegen.server.fix", reply), undefined);
  assert.equal(diagnosisOf("cutegen.server.diagnose", { ok: false, message: "No diagnosis", diagnosis: null }), undefined);
  assert.equal(diagnosisOf("cutegen.server.diagnose", { diagnosis: "  " }), undefined);
  assert.equal(diagnosisOf("cutegen.server.diagnose", undefined), undefined);
});

test("the preview document names the file and where the diagnosis came from", () => {
  const doc = diagnosisDocument("row_sum.cu", { markdown: MD, source: "knowledge" });
  assert.ok(doc.startsWith("# CuTeGen: row_sum.cu\n\n_From CuTeGen's knowledge base (no LLM needed)."));
  assert.ok(doc.includes("`cutegen.llmBaseUrl`") && doc.includes(MD));
  const llm = diagnosisDocument("k.cu", { markdown: "It needs a constant.", source: "llm" });
  assert.ok(llm.includes("From the LLM") && llm.endsWith("It needs a constant.\n"));
  assert.equal(diagnosisDocument("k.cu", { markdown: "x", source: "" }), "# CuTeGen: k.cu\n\nx\n");
});

test("one preview per kernel file", () => {
  assert.equal(diagnosisPath("row_sum.cu"), "/row_sum.cu.diagnosis.md");
  assert.equal(diagnosisPath("a/b.cu"), "/a_b.cu.diagnosis.md");
});
