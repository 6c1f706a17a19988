import assert from "node:assert/strict";
import { test } from "node:test";

import { ProposalStore, parseProposalPath, proposalPath } from "../../src/core/proposals";
import { Patch } from "../../src/core/results";

function patch(id: string, uri: string, newText = "new"): Patch {
  return { id, uri, version: 1, diff: "", newText, verified: "compiled", figures: [] };
}

test("proposal paths keep the file name and round-trip odd ids", () => {
  for (const id of ["p1", "a/b c?#%", "λ"]) {
    const p = proposalPath(id, "kernel.cu");
    assert.ok(p.endsWith("/kernel.cu"));
    assert.deepEqual(parseProposalPath(p), { id, base: false });
    assert.deepEqual(parseProposalPath(proposalPath(id, "kernel.cu", true)), { id, base: true });
  }
  assert.equal(parseProposalPath("/only"), undefined);
  assert.equal(parseProposalPath("/%E0%A4%A/k.cu"), undefined); // malformed escape
});

test("one proposal per file; content by path", () => {
  const store = new ProposalStore();
  store.add(patch("1", "file:///a.cu", "A1"));
  store.add(patch("2", "file:///b.cu", "B"));
  store.add(patch("3", "file:///a.cu", "A2"));
  assert.equal(store.size, 2);
  assert.equal(store.get("1"), undefined);
  assert.equal(store.forFile("file:///a.cu")!.id, "3");
  assert.equal(store.content(proposalPath("3", "a.cu")), "A2");
  assert.equal(store.content(proposalPath("3", "a.cu", true)), "");
  assert.match(store.content(proposalPath("1", "a.cu")), /no longer available/);
  assert.equal(store.delete("3"), true);
  assert.equal(store.delete("3"), false);
  assert.deepEqual(store.all().map((p) => p.id), ["2"]);
});
