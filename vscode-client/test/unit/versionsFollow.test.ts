// The Versions view follows the active editor (core/versions.ts viewTarget, NewestRequest): a kernel's own tree,
// never the previous kernel's rows; another file empties it with a message; a version's diff keeps it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { NewestRequest, viewTarget } from "../../src/core/versions";

const file = (path: string) => ({ scheme: "file", path, uri: `file://${path}` });

test("a CUDA file is the kernel the view shows", () => {
  assert.deepEqual(viewTarget(file("/w/softsign.cu")), { kernel: "file:///w/softsign.cu" });
  assert.deepEqual(viewTarget(file("/w/include/tile.cuh")), { kernel: "file:///w/include/tile.cuh" });
});

test("another file of the workspace empties the view and says why, naming the file", () => {
  const target = viewTarget(file("/w/softsign.py"));
  assert.ok(typeof target === "object" && "none" in target);
  assert.equal(target.none, "softsign.py is not a CUDA kernel: open a .cu file to see the versions Optimize kept of it.");
});

test("a version's diff, a proposal, an output channel or a webview keep the kernel shown", () => {
  assert.equal(viewTarget({ scheme: "cutegen-version", path: "/abc/k.cu", uri: "cutegen-version:/abc/k.cu" }), "keep");
  assert.equal(viewTarget({ scheme: "cutegen-proposal", path: "/p1/k.cu", uri: "cutegen-proposal:/p1/k.cu" }), "keep");
  assert.equal(viewTarget({ scheme: "output", path: "CuTeGen", uri: "output:CuTeGen" }), "keep");
  assert.equal(viewTarget(undefined), "keep");
});

test("only the newest request's reply is shown: a slow reply for the kernel before is dropped", () => {
  const requests = new NewestRequest();
  const first = requests.start(); // k1.cu asked, its reply slow
  const second = requests.start(); // the person switched to k2.cu
  assert.equal(requests.isNewest(second), true);
  assert.equal(requests.isNewest(first), false);
});
