// The notification a search's proposal opens: its figures as one sentence, not raw JSON. The figures are the
// engine's (fixtures/search-figures.json, kept in step with it by tests/agent/test_search_figures.py).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { describePatch, describeSearch, patchOf } from "../../src/core/results";

const root = path.resolve(__dirname, "..", "..", "..");
const figures = JSON.parse(fs.readFileSync(path.join(root, "test", "unit", "fixtures", "search-figures.json"), "utf8"));

function proposal(f: unknown) {
  return patchOf({ patch: { uri: "file:///w/k.cu", new_text: "x", verified: "A: vectorize: compiles", figures: f } })!;
}

test("a timed search reads as one sentence: candidates, the best version, its ratio ± noise, the shape", () => {
  assert.equal(describeSearch(figures.time),
    "Search: 3 of 3 candidates verified, best 33ac78986a 2.00× ±2% faster than the start (beam 1x3, 1 step)");
});

test("a search by energy says what its ratio is of", () => {
  assert.equal(describeSearch(figures.energy), "Search: 3 of 3 candidates verified, best 964e03db2e 2.50× ±2% "
    + "less energy per call than the start (beam 1x3, 1 step)");
});

test("without a GPU the best version is named, its speed not measured", () => {
  assert.equal(describeSearch(figures.untimed),
    "Search: 2 of 2 candidates verified, best 964e03db2e, speed not measured (beam 1x2, 1 step)");
});

test("the notification holds no JSON, and the search's own figures are not repeated as lines", () => {
  for (const f of [figures.time, figures.energy, figures.untimed]) {
    const text = describePatch(proposal(f), "k.cu");
    assert.doesNotMatch(text, /[{}"]/, text);
    assert.doesNotMatch(text, /tree size|chain:|search:|best: /, text);
  }
  assert.equal(describePatch(proposal(figures.time), "k.cu"), "CuTeGen proposes a change to k.cu. Verified: A: "
    + "vectorize: compiles. Search: 3 of 3 candidates verified, best 33ac78986a 2.00× ±2% faster than the start "
    + "(beam 1x3, 1 step). Measured: 2.00× faster · median 3 ms · before 6 ms · 90 mJ/call · spread: 0.01 · "
    + "workload: elementwise.");
});

test("a stopped search says why; broken search figures never throw", () => {
  const stopped = { ...figures.time, search: { ...figures.time.search, stop: "the token budget (1,000 tokens) is spent" } };
  assert.match(describeSearch(stopped)!, /\(beam 1x3, 1 step; stopped: the token budget \(1,000 tokens\) is spent\)$/);
  assert.equal(describeSearch({ search: {} }), "Search: 0 candidates, no verified better version");
  assert.equal(describeSearch({ search: { candidates: 2, verified: 0 }, best: null }),
    "Search: 0 of 2 candidates verified, no verified better version");
  assert.equal(describeSearch({ speedup: 2 }), undefined); // not a search's
  assert.equal(describeSearch("2×"), undefined);
  assert.equal(proposal({ speedup: 2 }).search, undefined);
});
