// End to end in a real VS Code (issue 55): an Optimize search over three example kernels. With
// `cutegen.optimizeSearch` `beam:2x2` (one step), "CuTeGen: Optimize" from the palette runs a search on each kernel
// against the scripted endpoint (search-scenario.mjs: real edits, one that does not compile, one reply with no edit),
// real nvcc compiles every candidate, and the best version opens as a proposal. The Versions view then lists each
// kernel's versions with their verdicts and changes, a click on a version opens its diff, and each tree is on disk
// under .cutegen/. Without a GPU the judge compiles and builds, never runs: every version is "not timed", no best
// version is named, and that is what is asserted.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { Processes, until } from "./harness.mjs";
import { KERNELS, searchReplies, searchWorkspace } from "./search-scenario.mjs";
import {
  SLOW, keepArtifacts, launch, llmSettings, log, openFile, palette, screenshot, scriptedEndpoint, stepper, throwaway,
  userSettings,
} from "./workbench.mjs";

const SEARCH = { "cutegen.optimizeSearch": "beam:2x2", "cutegen.optimizeSteps": 1, "cutegen.optimizeMinutes": 10,
  "cutegen.optimizeTokens": 50_000 };
const NO_GPU = !fs.existsSync("/dev/nvidiactl");

/** The rows of the Versions view: label, description, and whether its icon marks a failure. */
async function versionRows(page) {
  return page.locator(".part.sidebar .customview-tree .monaco-list-row").evaluateAll((rows) => rows.map((r) => ({
    label: r.querySelector(".label-name")?.textContent ?? "",
    description: r.querySelector(".label-description")?.textContent ?? "",
    failed: !!r.querySelector(".codicon-close"),
  })));
}

/** Whether the view's rows are `k`'s versions: each row's change and verdict, failures marked. The view follows the
 * active editor and reads the tree again after a switch, so rows of the kernel before can still be showing: the
 * three kernels' trees differ in size or in which version failed, so rows that match are that kernel's. */
function rowsOf(k, rows) {
  return rows.length === k.versions.length && k.versions.every(([change, verdict], i) =>
    rows[i].label.replace(/^★ /, "").startsWith(change || "(start)") && (verdict === "verified" && !NO_GPU
      ? true // timed on a GPU: a compiling candidate may be verified, not faster, ... (the judge's to say)
      : rows[i].description.includes(` · ${verdict}`) && rows[i].failed === (verdict !== "verified")));
}

async function untilVersionsOf(page, k) {
  let seen = [];
  try {
    return await until(async () => {
      seen = await versionRows(page);
      return rowsOf(k, seen) && seen;
    }, 60_000 * SLOW, `the ${k.versions.length} versions of ${k.name} in the view`, 1000);
  } catch (e) {
    throw new Error(`${e.message}; the view shows ${JSON.stringify(seen)}`);
  }
}

/** The tree a kernel's searches left under .cutegen/agent/<stem>-<hash>/. */
function treeOnDisk(workspace, kernel) {
  const agent = path.join(workspace, ".cutegen", "agent");
  const stem = path.basename(kernel, ".cu");
  const folders = fs.existsSync(agent) ? fs.readdirSync(agent).filter((f) => new RegExp(`^${stem}-[0-9a-f]+$`).test(f)) : [];
  assert.equal(folders.length, 1, `one folder of ${kernel} under ${agent}: ${folders}`);
  const folder = path.join(agent, folders[0]);
  return { folder, tree: JSON.parse(fs.readFileSync(path.join(folder, "tree.json"), "utf8")) };
}

test("CuTeGen in a real VS Code: a beam search over three kernels, their versions in the view and on disk", { timeout: 40 * 60_000 }, async (t) => {
  const started = Date.now();
  const dirs = throwaway("search");
  const { workspace } = dirs;
  const procs = new Processes(log);
  searchWorkspace(workspace);
  const texts = Object.fromEntries(KERNELS.map((k) => [k.name, fs.readFileSync(path.join(workspace, k.name), "utf8")]));
  let browser;
  let page;
  t.after(async () => {
    try {
      if (page) await screenshot(page, "final").catch(() => undefined);
      await browser?.close().catch(() => undefined);
    } finally {
      await procs.killAll();
      keepArtifacts(dirs);
    }
  });

  const url = await scriptedEndpoint(procs, dirs, searchReplies());
  ({ browser, page } = await launch(procs, dirs, userSettings({ ...llmSettings(url), ...SEARCH })));
  const step = stepper(t, page);
  const status = page.locator(".statusbar-item", { hasText: "CuTeGen" }).first();

  await step("opening a kernel starts the server", {}, async () => {
    await openFile(page, KERNELS[0].name);
    await status.waitFor({ timeout: 60_000 * SLOW });
    await until(async () => !/starting/.test((await status.textContent()) ?? ""), 60_000 * SLOW, "the language server to start");
    assert.doesNotMatch((await status.textContent()) ?? "", /server (failed|stopped)/);
  });

  for (const k of KERNELS) {
    await step(`CuTeGen: Optimize searches ${k.name} and offers its best version as a diff`, {}, async () => {
      const began = Date.now();
      await palette(page, "Notifications: Clear All Notifications");
      await openFile(page, k.name);
      await palette(page, "CuTeGen: Optimize");
      await page.locator(".notification-toast", { hasText: `CuTeGen: optimizing ${k.name}` }).first()
        .waitFor({ timeout: 30_000 * SLOW });
      // The search measures the start, asks for two candidates, builds them and judges them: nvcc, minutes.
      const toast = page.locator(".notification-toast", { hasText: "CuTeGen proposes a change" }).first();
      await toast.waitFor({ timeout: 600_000 * SLOW });
      await page.locator(".tab", { hasText: `${k.name} ↔ CuTeGen proposal` }).first().waitFor({ timeout: 15_000 * SLOW });
      const said = ((await toast.locator(".notification-list-item-message").textContent()) ?? "").replace(/\s+/g, " ");
      log(`${k.name}: searched in ${Math.round((Date.now() - began) / 1000)} s: ${said}`);
      assert.match(said, new RegExp(`${k.versions.length} versions in the tree, 2 candidates this search`), said);
      if (NO_GPU) assert.match(said, /compiled and built · not run: no GPU.*speed not measured/, said);
      await screenshot(page, `proposal-${path.basename(k.name, ".cu")}`);
      await toast.locator(".monaco-button", { hasText: "Discard" }).first().click();
      await until(async () => (await page.locator(".tab", { hasText: "CuTeGen proposal" }).count()) === 0, 15_000 * SLOW,
        "the proposal to close");
      assert.equal(fs.readFileSync(path.join(workspace, k.name), "utf8"), texts[k.name], "a discarded proposal changed the file");
    });
  }

  await step("the Versions view lists each kernel's versions, verdicts and changes", {}, async () => {
    await palette(page, "CuTeGen: Focus on Versions View");
    for (const k of KERNELS) {
      await openFile(page, k.name); // the view follows the active kernel
      const rows = await untilVersionsOf(page, k);
      log(`${k.name} in the view: ${JSON.stringify(rows)}`);
      // No GPU: nothing was timed, so no version is best (no ★) and none has a ratio.
      if (NO_GPU) assert.ok(rows.every((r) => r.description.startsWith("not timed · ") && !r.label.startsWith("★")), JSON.stringify(rows));
      assert.match(rows[0].description, /in the file/, "the start is the file's text (the proposal was discarded)");
      await screenshot(page, `versions-${path.basename(k.name, ".cu")}`);
    }
  });

  await step("a click on a version opens its diff from the file", {}, async () => {
    const k = KERNELS[0];
    await openFile(page, k.name);
    const rows = page.locator(".part.sidebar .customview-tree .monaco-list-row");
    for (const [i, text] of [[2, k.changed], [1, "vec_index"]]) {
      const shown = await untilVersionsOf(page, k); // a click on a row of the kernel before would find no such version
      const verdict = shown[i].description.split(" · ")[1]; // the judge's (on a GPU a candidate may be not-faster)
      await rows.nth(i).click();
      const tab = page.locator(".tab", { hasText: `${k.name} ↔ version` }).filter({ hasText: `, ${verdict})` }).first();
      await tab.waitFor({ timeout: 30_000 * SLOW });
      const title = (await tab.textContent()) ?? "";
      log(`diff tab: ${title.trim()}`);
      assert.match(title, new RegExp(`\\(${NO_GPU ? "not timed" : "[^,]+"}, ${verdict}\\)`), title);
      const modified = page.locator(".editor-group-container.active .monaco-diff-editor .editor.modified .view-line");
      await modified.filter({ hasText: text }).first().waitFor({ timeout: 15_000 * SLOW });
      await screenshot(page, `version-diff-${verdict}`);
    }
  });

  await step("each kernel's tree is kept under .cutegen/", {}, async () => {
    for (const k of KERNELS) {
      const { folder, tree } = treeOnDisk(workspace, k.name);
      log(`${k.name}: ${path.relative(workspace, folder)}/tree.json: ${tree.nodes.length} versions, ${tree.failures.length} failures`);
      assert.equal(tree.nodes.length, k.versions.length, `${k.name}: versions in tree.json`);
      assert.equal(tree.failures.length, k.failures, `${k.name}: failures in tree.json`);
      for (const f of tree.failures) assert.match(f.why, k.failure, `${k.name}: why a candidate failed`);
      assert.deepEqual(tree.searches.map((s) => s.shape), ["beam:2x2"]);
      for (const node of tree.nodes) {
        assert.ok(fs.existsSync(path.join(folder, "versions", `${node.id}.cu`)), `${k.name}: the text of version ${node.id}`);
        if (NO_GPU && node.ok) assert.match(node.label, /not run: no GPU/, `${k.name}: ${node.label}`);
      }
      const start = tree.nodes.find((n) => n.parent === null);
      assert.equal(fs.readFileSync(path.join(folder, "versions", `${start.id}.cu`), "utf8"), texts[k.name]);
    }
    log(`the search case took ${Math.round((Date.now() - started) / 1000)} s`);
  });
});
