// The search scenario of the end-to-end test (issue 55): three example kernels, copied with their problems, and
// the replies a model could write for the first two directions of each kernel's optimization menu (a `beam:2x2`
// search of one step asks the start for two candidates, each in another direction). The edits are real, in
// four formats (SEARCH/REPLACE, a unified diff, the whole file, CuTeGen's JSON line edits), each built from the example's
// own text at test time, all compiling but one, which names a variable it never declares; one reply makes no edit.
//
//   node test/e2e/search-scenario.mjs OUT_DIR   writes the workspace and replies.json (to try them with the CLI)

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const examples = path.resolve(here, "..", "..", "..", "examples");

// The first two directions of the elementwise menu (cute_knowledge's optimization menus), in the order asked.
const VECTORIZE = "128-bit vectorized loads and stores";
const IN_FLIGHT = "More bytes in flight per thread";

/** Each kernel: where it comes from, and what its tree holds after the search (the start, then each direction). */
export const KERNELS = [
  {
    name: "softsign.cu", problem: "softsign.py", from: path.join(examples, "softsign"),
    // (change prefix, verdict, shown in the view)
    versions: [["", "verified"], [VECTORIZE, "check-failed"], [IN_FLIGHT, "verified"]],
    failures: 1, failure: /does not compile: identifier "vec_index" is undefined/, changed: "kVecPerThread = 8",
  },
  {
    name: "elementwise_vec128.cu", problem: "elementwise_vec128.py", from: path.join(examples, "idioms", "elementwise_vec128"),
    versions: [["", "verified"], [VECTORIZE, "verified"], [IN_FLIGHT, "verified"]],
    failures: 0, changed: "kTile = 8192",
  },
  {
    name: "transpose_swizzle.cu", problem: "transpose_swizzle.py", from: path.join(examples, "idioms", "transpose_swizzle"),
    versions: [["", "verified"], [IN_FLIGHT, "verified"]], // its vectorize reply makes no edit: a failure, no version
    failures: 1, failure: /the edit was rejected: the reply holds no edit/, changed: "kRowsPerPass = 4",
  },
];

/** Copy the kernels and their problems (paired by name) into `workspace`. */
export function searchWorkspace(workspace) {
  for (const k of KERNELS) {
    for (const file of [k.name, k.problem]) fs.copyFileSync(path.join(k.from, file), path.join(workspace, file));
  }
}

function source(kernel) {
  return fs.readFileSync(path.join(KERNELS.find((k) => k.name === kernel).from, kernel), "utf8");
}

/** `old` must be in the example exactly once (else the example changed and this scenario must follow it). */
function replaced(text, old, now, kernel) {
  assert.equal(text.split(old).length, 2, `${kernel} no longer holds exactly one ${JSON.stringify(old)}`);
  return text.replace(old, now);
}

function searchReplace(kernel, old, now) {
  replaced(source(kernel), old, now, kernel);
  return `${kernel}\n\`\`\`\n<<<<<<< SEARCH\n${old}\n=======\n${now}\n>>>>>>> REPLACE\n\`\`\`\n`;
}

/** A unified diff of one changed line with three lines of context, as a model writes it. */
function unifiedDiff(kernel, old, now) {
  const lines = source(kernel).split("\n");
  const at = lines.indexOf(old);
  assert.ok(at >= 3, `${kernel} no longer has the line ${JSON.stringify(old)}`);
  const before = lines.slice(at - 3, at), after = lines.slice(at + 1, at + 4);
  return ["```diff", `--- a/${kernel}`, `+++ b/${kernel}`, `@@ -${at - 2},7 +${at - 2},7 @@`,
    ...before.map((l) => ` ${l}`), `-${old}`, `+${now}`, ...after.map((l) => ` ${l}`), "```", ""].join("\n");
}

function wholeFile(kernel, edits) {
  let text = source(kernel);
  for (const [old, now] of edits) text = replaced(text, old, now, kernel);
  return `Here is the whole ${kernel}:\n\`\`\`cuda\n${text}\`\`\`\n`;
}

function jsonEdit(kernel, old, now) {
  const line = source(kernel).split("\n").indexOf(old) + 1;
  assert.ok(line > 0, `${kernel} no longer has the line ${JSON.stringify(old)}`);
  return "```json\n" + JSON.stringify([{ action: "replace", line_number: line, num_lines: 1, old_code: old, new_code: now }]) +
    "\n```\n";
}

/** The scripted endpoint's entries: one per kernel and direction, each used once. */
export function searchReplies() {
  const ask = (kernel, direction, reply) =>
    ({ match: `DIRECTION: ${direction}`, match_also: [`optimize \`${kernel}\``], reply });
  return [
    // softsign: a hand-written float4 path over an index it never declares (does not compile) ...
    ask("softsign.cu", VECTORIZE, `CHANGE: ${VECTORIZE}: load the tile as float4 directly.\n` + searchReplace("softsign.cu",
      "    copy(tiled_copy, tXgX, frag);            // all loads first ...",
      "    float4 v4 = reinterpret_cast<const float4*>(x)[vec_index];  // all loads first ...\n" +
      "    copy(tiled_copy, tXgX, frag);")),
    // ... and eight 128-bit accesses per thread instead of four (it compiles).
    ask("softsign.cu", IN_FLIGHT, `CHANGE: ${IN_FLIGHT}: eight 128-bit loads per thread before the math.\n` +
      searchReplace("softsign.cu", "constexpr int kVecPerThread = 4;    // 128-bit accesses per thread per tile",
        "constexpr int kVecPerThread = 8;    // 128-bit accesses per thread per tile")),
    // elementwise_vec128: 128 threads of eight 128-bit accesses each (the whole file) ...
    ask("elementwise_vec128.cu", VECTORIZE, `CHANGE: ${VECTORIZE}: 128 threads, each issuing eight 16-byte loads.\n` +
      wholeFile("elementwise_vec128.cu", [
        ["constexpr int kThreads = 256;", "constexpr int kThreads = 128;"],
        ["constexpr int kTile = 4096;  // floats per CTA: 256 threads x 4 floats x 4 repeats",
          "constexpr int kTile = 4096;  // floats per CTA: 128 threads x 4 floats x 8 repeats"],
      ])),
    // ... and a tile twice as large (a unified diff).
    ask("elementwise_vec128.cu", IN_FLIGHT, `CHANGE: ${IN_FLIGHT}: a tile of 8192 floats, eight loads per thread.\n` +
      unifiedDiff("elementwise_vec128.cu", "constexpr int kTile = 4096;  // floats per CTA: 256 threads x 4 floats x 4 repeats",
        "constexpr int kTile = 8192;  // floats per CTA: 256 threads x 4 floats x 8 repeats")),
    // transpose_swizzle: no edit for vectorizing (a transpose's column reads are scalar) ...
    ask("transpose_swizzle.cu", VECTORIZE, `CHANGE: ${VECTORIZE}\nThe column reads of the swizzled tile are ` +
      "scalar by design; 128-bit accesses would need a different tile shape, so I propose no edit in this direction."),
    // ... and eight elements per thread instead of four (CuTeGen's JSON line edits).
    ask("transpose_swizzle.cu", IN_FLIGHT, `CHANGE: ${IN_FLIGHT}: 32 x 4 threads, eight elements each.\n` +
      jsonEdit("transpose_swizzle.cu", "constexpr int kRowsPerPass = 8;  // blockDim = (32, 8)",
        "constexpr int kRowsPerPass = 4;  // blockDim = (32, 4)")),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  assert.ok(out, "usage: node search-scenario.mjs OUT_DIR");
  fs.mkdirSync(out, { recursive: true });
  searchWorkspace(out);
  fs.writeFileSync(path.join(out, "replies.json"), JSON.stringify(searchReplies(), null, 2));
  console.log(`${KERNELS.length} kernels and ${searchReplies().length} replies in ${out}`);
}
