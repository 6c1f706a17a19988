// The "Show layout" page: reply parsing, an inert SVG, a strict CSP and theme-following styles.

import assert from "node:assert/strict";
import { test } from "node:test";

import { inertSvg, layoutPage, layoutTarget, parseLayoutReply } from "../../src/core/layoutPage";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="white"/></svg>';

test("a picture reply becomes a page with the title, the kind and the SVG", () => {
  const reply = parseLayoutReply({ title: "[N=4] sA: smem half_t Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", kind: "Tensor", svg: SVG,
                                   instantiations: ["N=4", "N=8"] });
  assert.equal(reply.kind, "picture");
  const page = layoutPage(reply, "abc", "vscode-resource:");
  assert.ok(page.includes("Sw&lt;3,3,3&gt;"), "the title is escaped");
  assert.ok(page.includes(SVG));
  assert.ok(page.includes("instantiations: N=4, N=8"));
  assert.ok(page.includes("default-src 'none'") && !/script-src/.test(page), "no script may run");
  assert.ok(page.includes("var(--vscode-editor-background)") && page.includes("body.vscode-dark .paper"));
});

test("errors from the server are shown, not thrown", () => {
  const reply = parseLayoutReply({ error: "no picture of tAgA: 'int' is not a static extent" });
  assert.deepEqual(reply, { kind: "error", message: "no picture of tAgA: 'int' is not a static extent" });
  assert.ok(layoutPage(reply, "n", "x").includes('class="error"'));
  assert.equal(parseLayoutReply(undefined).kind, "error");
  assert.equal(parseLayoutReply({ svg: "not an svg" }).kind, "error");
});

test("scripts and handlers are removed from an SVG", () => {
  const svg = inertSvg('<svg onload="alert(1)"><script>alert(2)</script><rect onclick=\'x()\'/></svg>');
  assert.equal(svg, "<svg><rect/></svg>");
});

test("the target: a code action's position, else the cursor", () => {
  const cursor = { uri: "file:///k.cu", line: 9, character: 4 };
  assert.deepEqual(layoutTarget({ uri: "file:///a.cu", line: 11, character: 9 }, cursor), { uri: "file:///a.cu", line: 11, character: 9 });
  assert.deepEqual(layoutTarget(undefined, cursor), cursor);
  assert.deepEqual(layoutTarget("file:///k.cu", cursor), cursor);
  assert.deepEqual(layoutTarget("file:///b.cu", cursor), { uri: "file:///b.cu", line: 0, character: 0 });
  assert.equal(layoutTarget(undefined, undefined), undefined);
});

test("a template's object: the page says which instantiation it shows and links the others", () => {
  // the shape server/cutegen/lsp/layouts.py's picture_for replies with
  const other = { uri: "file:///t.cu", line: 24, character: 7, instantiation: "BM=32, Element=float" };
  const reply = parseLayoutReply({ title: "[BM=16, Element=float] smem: (_16,_8):(_8,_1)", kind: "Layout", svg: SVG,
                                   instantiations: ["BM=16, Element=float", "BM=32, Element=float"],
                                   shown: "in launch_tiles<16, float> (1 of 2)",
                                   others: [{ label: "in launch_tiles<32, float> (2 of 2)", arguments: other }, { label: 3 }] });
  assert.equal(reply.kind, "picture");
  if (reply.kind !== "picture") return;
  assert.deepEqual(reply.others, [{ label: "in launch_tiles<32, float> (2 of 2)", target: other }]);
  const page = layoutPage(reply, "n", "x");
  assert.ok(page.includes("in launch_tiles&lt;16, float&gt; (1 of 2)"));
  assert.ok(page.includes(`href="command:cutegen.showLayout?${encodeURIComponent(JSON.stringify([other])).replace(/'/g, "&#39;")}"`));
  assert.deepEqual(layoutTarget(other, undefined), other);
});
