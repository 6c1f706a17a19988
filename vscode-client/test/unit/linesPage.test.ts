// The "Profile Lines" page: reply parsing, the stale warning, an inert SVG and the hot-line table.

import assert from "node:assert/strict";
import { test } from "node:test";

import { linesPage, parseLinesReply, stallText } from "../../src/core/linesPage";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect class="heat" data-line="33"/></svg>';
const LINE = { line: 59, share: 0.213, text: "copy(tiled_copy, frag, tYgY);  // <stores>", stalls: { drain: 64213, lg_throttle: 13940, wait: 10 } };

test("a picture reply becomes a page with the picture and the hot lines", () => {
  const reply = parseLinesReply({ ok: true, title: "softsign.cu: hottest line 33", svg: SVG, stale: false, lines: [LINE, { bad: 1 }] });
  assert.equal(reply.kind, "picture");
  const page = linesPage(reply, "n0nce", "vscode-resource:");
  assert.ok(page.includes(SVG) && page.includes("<td>59</td><td>21.3 %</td>"));
  assert.ok(page.includes("&lt;stores&gt;"), "source text is escaped");
  assert.ok(!page.includes("class=\"stale\"") && page.includes("default-src 'none'") && !/script-src/.test(page));
});

test("a stale profile says so above the picture", () => {
  const page = linesPage(parseLinesReply({ title: "t", svg: SVG, stale: true, lines: [] }), "n", "x");
  assert.ok(page.includes("The file changed since this profile"));
});

test("a refusal is an error, not a picture", () => {
  assert.deepEqual(parseLinesReply({ ok: false, message: "save softsign.cu first" }),
                   { kind: "error", message: "save softsign.cu first" });
  assert.equal(parseLinesReply(undefined).kind, "error");
  assert.equal(parseLinesReply({ svg: "<script>alert(1)</script>" }).kind, "error");
});

test("stall reasons are listed largest first with their share", () => {
  assert.equal(stallText(LINE, 2), "drain 82 %, lg_throttle 18 %");
});
