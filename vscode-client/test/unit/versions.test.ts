// The Versions view's reading of the server's tree: a reply captured from the engine (fixtures/versions-reply.json,
// kept in step with the engine by tests/lsp/test_versions_reply.py), and the broken replies a server can send.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { VersionTree, childrenOf, describeVersion, parseVersions, versionPath } from "../../src/core/versions";

const root = path.resolve(__dirname, "..", "..", "..");
const reply = JSON.parse(fs.readFileSync(path.join(root, "test", "unit", "fixtures", "versions-reply.json"), "utf8"));

function tree(): VersionTree {
  const parsed = parseVersions(reply);
  assert.ok(!("error" in parsed));
  return parsed;
}

test("the tree nests by parent: the start, its two children, the best under the one it was made from", () => {
  const t = tree();
  const [start, ...rest] = childrenOf(t, null);
  assert.equal(rest.length, 0);
  assert.equal(start.change, "");
  assert.deepEqual(childrenOf(t, start.id).map((v) => v.change), ["vectorize", "fuse"]);
  const vectorize = childrenOf(t, start.id)[0];
  const [grid] = childrenOf(t, vectorize.id);
  assert.deepEqual(grid.path, ["vectorize", "grid shape"]);
  assert.equal(t.failures, 1);
});

test("each version reads: change, ratio ± interval, verdict; best and current marked; only verified ones restore", () => {
  const byChange = new Map(tree().versions.map((v) => [v.change, describeVersion(v)]));
  const best = byChange.get("grid shape")!;
  assert.equal(best.label, "★ grid shape");
  assert.equal(best.description, "2.50× ±2% · verified · best");
  assert.equal(best.contextValue, "cutegen.version.restorable");
  assert.match(best.tooltip, /vectorize → grid shape/);
  const start = byChange.get("")!;
  assert.equal(start.label, "(start)");
  assert.equal(start.description, "1.00× · verified · in the file");
  assert.equal(start.contextValue, "cutegen.version"); // the file holds it: nothing to restore
  const fuse = byChange.get("fuse")!;
  assert.equal(fuse.description, "0.91× ±2% · not-faster");
  assert.equal(fuse.contextValue, "cutegen.version"); // never verified better: never offered
});

test("a refusal, a damaged reply and odd versions are read without throwing", () => {
  assert.deepEqual(parseVersions({ ok: false, message: "k.cu: no such file" }), { error: "k.cu: no such file" });
  assert.deepEqual(parseVersions(null), { error: "the language server sent no versions" });
  assert.deepEqual(parseVersions({ ok: true, message: "m", tree: "x" }), { error: "m" });
  const odd = parseVersions({ ok: true, message: "", tree: { versions: [null, { id: "" }, { id: "a", parent: "gone", ratio: 3 }] } });
  assert.ok(!("error" in odd));
  assert.equal(odd.versions.length, 1);
  const [orphan] = childrenOf(odd, null); // a parent missing from the tree: shown at the top, not lost
  assert.equal(orphan.id, "a");
  assert.equal(orphan.ratio, "not timed");
  assert.equal(describeVersion(orphan).contextValue, "cutegen.version");
});

test("a version's document keeps the kernel's file name (and so its highlighting)", () => {
  assert.equal(versionPath("a/b c", "kernel.cu"), "/a%2Fb%20c/kernel.cu");
});
