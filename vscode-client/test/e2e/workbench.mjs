// The workbench every end-to-end test drives: a throwaway profile and workspace, the scripted LLM endpoint,
// code-server with the packaged extension, Debian's Chromium driven by playwright-core, and the moves a user makes
// in it (the palette, quick open, go to line, hovers, quick fixes). Each test file runs in its own process, so the
// log and the screenshots' numbering here are that test's.
//
// Inputs (scripts/test-vscode.sh sets them): CODE_SERVER (its bin, run under Node 24 from PATH),
// CUTEGEN_E2E_PYTHON (Python with cutegen[lsp]; default <repo>/.venv/bin/python), CUTEGEN_E2E_VSIX
// (default vscode-client/cutegen.vsix), CHROMIUM (default /usr/bin/chromium), CUTEGEN_E2E_SLOW (multiplies every
// wait). Screenshots and logs go to vscode-client/test-artifacts/ (and $CUTEGEN_ARTIFACTS/vscode-e2e or
// $OUT/vscode-e2e), a test other than the first under a folder of its own name.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { chromium } from "playwright-core";

import {
  artifactDirs, copyArtifactTree, extensionDir, firstLine, freePort, httpOk, repo, run, saveArtifact, tempDir, until,
} from "./harness.mjs";

export const SCRIPTED = process.env.CUTEGEN_E2E_SCRIPTED ?? path.join(repo, "tests", "support", "scripted_openai.py");
export const PYTHON = process.env.CUTEGEN_E2E_PYTHON ?? path.join(repo, ".venv", "bin", "python");
const VSIX = process.env.CUTEGEN_E2E_VSIX ?? path.join(extensionDir, "cutegen.vsix");
const CODE_SERVER = process.env.CODE_SERVER ?? "code-server";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const SLOW = Number(process.env.CUTEGEN_E2E_SLOW ?? "1"); // multiplies every wait (a loaded CI machine)

let suite = ""; // the artifacts' folder under test-artifacts/ ("": the folder itself)

/** The folders of one test: its workspace, a throwaway profile, and its logs, under a fresh temporary root; its
 * artifact folder emptied (`name`: a folder of its own under test-artifacts/, "" for test-artifacts/ itself). */
export function throwaway(name = "") {
  for (const [what, file] of [["the packaged extension", VSIX], ["the Python with cutegen[lsp]", PYTHON], ["Chromium", CHROMIUM]]) {
    assert.ok(fs.existsSync(file), `${what} is missing: ${file} (scripts/test-vscode.sh builds and installs what this test needs)`);
  }
  suite = name;
  for (const dir of artifactDirs(suite)) {
    for (const old of fs.readdirSync(dir)) fs.rmSync(path.join(dir, old), { recursive: true, force: true });
  }
  const root = tempDir("cutegen-e2e-");
  const dirs = {
    root, workspace: path.join(root, "workspace"), userData: path.join(root, "user-data"),
    extensions: path.join(root, "extensions"), logs: path.join(root, "logs"),
  };
  for (const d of [dirs.workspace, path.join(dirs.userData, "User"), dirs.extensions, dirs.logs]) fs.mkdirSync(d, { recursive: true });
  return dirs;
}

/** At the end: the logs and the test's own log kept as artifacts, the temporary root removed. */
export function keepArtifacts(dirs) {
  copyArtifactTree(path.join(dirs.userData, "logs"), "vscode-logs", suite);
  copyArtifactTree(dirs.logs, "process-logs", suite);
  saveArtifact("e2e.log", lines.join("\n") + "\n", suite);
  fs.rmSync(dirs.root, { recursive: true, force: true });
}

/** The scripted LLM endpoint (the agent's tests' own OpenAI-compatible server) serving `entries`; its URL. */
export async function scriptedEndpoint(procs, dirs, entries) {
  const repliesFile = path.join(dirs.root, "replies.json");
  fs.writeFileSync(repliesFile, JSON.stringify(entries, null, 2));
  const child = procs.start("scripted LLM", PYTHON, [SCRIPTED, "--port", "0", "--replies", repliesFile],
    { pipeStdout: true, logFile: path.join(dirs.logs, "scripted-openai.log") });
  const url = await firstLine(child, 20_000 * SLOW, "the scripted LLM endpoint's URL");
  log(`scripted LLM endpoint at ${url}`);
  return url;
}

/** The settings of an endpoint at `url`; the key is in the variable that `launch` sets. */
export function llmSettings(url) {
  return { "cutegen.llmBaseUrl": url, "cutegen.llmModel": "scripted", "cutegen.llmApiKeyEnv": "CUTEGEN_E2E_KEY" };
}

/** The quiet workbench (VS Code's own AI, tips and updates off) that scripts/demo.sh --editor uses too, with
 * CuTeGen's Python and `extra`. */
export function userSettings(extra) {
  return {
    ...JSON.parse(fs.readFileSync(path.join(repo, "scripts", "lib", "vscode-settings.json"), "utf8")),
    "cutegen.python": PYTHON,
    ...extra,
  };
}

/** code-server is a remote setup: machine-scoped settings (cutegen.python) count only in Machine/. */
export function writeSettings(dirs, settings) {
  for (const scope of ["User", "Machine"]) {
    fs.mkdirSync(path.join(dirs.userData, scope), { recursive: true });
    fs.writeFileSync(path.join(dirs.userData, scope, "settings.json"), JSON.stringify(settings, null, 2));
  }
}

/** code-server with the packaged extension in the throwaway profile, opened on the workspace in Chromium: the
 * browser and the page once the workbench has loaded. */
export async function launch(procs, dirs, settings) {
  const { root, workspace, userData, extensions, logs } = dirs;
  const env = {
    ...process.env, XDG_CONFIG_HOME: path.join(root, "xdg-config"), XDG_DATA_HOME: path.join(root, "xdg-data"),
    CUTEGEN_E2E_KEY: "sk-scripted", // the variable the key setting names
  };
  writeSettings(dirs, settings);
  const common = ["--user-data-dir", userData, "--extensions-dir", extensions];
  log(run(CODE_SERVER, [...common, "--install-extension", VSIX, "--force"], { env }).trim());
  const installed = run(CODE_SERVER, [...common, "--list-extensions", "--show-versions"], { env });
  assert.match(installed, /cutegen\.cutegen@/, `the .vsix did not install: ${installed}`);

  const port = await freePort();
  const config = path.join(root, "code-server.yaml");
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  procs.start("code-server", CODE_SERVER, [
    ...common, "--config", config, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry",
    "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", "--ignore-last-opened",
    workspace,
  ], { env, cwd: workspace, logFile: path.join(logs, "code-server.log") });
  const base = `http://127.0.0.1:${port}`;
  await until(() => httpOk(`${base}/healthz`), 60_000 * SLOW, "code-server to listen");
  log(`code-server at ${base}`);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => log(`page error: ${e.message}`));
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: 90_000 * SLOW });
  log("workbench loaded");
  return { browser, page };
}

/** `t.test` for a step that leaves a screenshot when it fails. */
export function stepper(t, page) {
  return (name, options, fn) => t.test(name, options, async (st) => {
    try {
      await fn(st);
    } catch (e) {
      await screenshot(page, `FAILED-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40)}`).catch(() => undefined);
      throw e;
    }
  });
}

export const lines = [];
export function log(message) {
  const line = `[e2e ${new Date().toISOString().slice(11, 19)}] ${message}`;
  lines.push(line);
  console.log(line);
}

let shot = 0;
export async function screenshot(page, name) {
  const file = `${String(++shot).padStart(2, "0")}-${name}.png`;
  await sleep(500); // let fades and hovers settle
  const data = await page.screenshot({ type: "png" });
  saveArtifact(file, data, suite);
  log(`screenshot ${file}`);
}

/**
 * Open a quick input with `key`, put `value` in it, wait for `ready` (a locator, optional), press Enter.
 * Retried: the quick input closes when focus moves (an editor opening after a diff closed, say), and a
 * press that lands in that moment leaves nothing to type into.
 *
 * Keys go wherever the focus is when they arrive, not to the element they were meant for (playwright's fill
 * focuses the input, then types): a fresh clone's loaded run had the go-to-line's ":45:1" and its Enter land in
 * the kernel when the extension showed the applied file meanwhile, and Undo then undid that. So the value is
 * set on the input itself, and Enter is pressed only while the input holds the keyboard.
 */
export async function quickInput(page, key, value, ready, enter = true) {
  let last;
  for (let attempt = 1; attempt <= 4; attempt++) {
    await noDialog(page);
    try {
      await page.keyboard.press(key);
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 10_000 * SLOW });
      await input.click({ trial: true, timeout: 5_000 * SLOW }); // only the checks a fill makes: visible, stable, enabled
      // Set until it stays: a quick input still opening writes its own prefix (">") over a value set too early.
      await until(async () => {
        await input.evaluate((el, v) => {
          if (el.value === v) return;
          el.value = v;
          el.dispatchEvent(new Event("input", { bubbles: true })); // what the quick input listens to
        }, value);
        await sleep(150);
        return (await input.inputValue()) === value;
      }, 5_000 * SLOW, `the quick input to hold ${JSON.stringify(value)}`, 0);
      if (ready) await ready.waitFor({ state: "visible", timeout: 15_000 * SLOW });
      await sleep(200);
      if (enter) {
        const holds = await input.evaluate((el, v) => el === document.activeElement && el.value === v, value);
        if (!holds) throw new Error("the quick input lost the keyboard before Enter");
        await page.keyboard.press("Enter");
      }
      return;
    } catch (e) {
      last = e;
      // What the quick input held and offered, and where the keyboard was, when it gave up.
      const seen = await page.evaluate(() => {
        const input = document.querySelector(".quick-input-widget input");
        const rows = [...document.querySelectorAll(".quick-input-list .monaco-list-row")].slice(0, 3).map((r) => r.textContent);
        const focus = document.activeElement;
        return { value: input?.value, rows, focus: focus ? `${focus.tagName.toLowerCase()}.${focus.className}`.slice(0, 60) : null };
      }).catch(() => undefined);
      log(`quick input ${key} ${JSON.stringify(value)}: attempt ${attempt} failed (${e.message.split("\n")[0]}) ${JSON.stringify(seen)}`);
      await page.keyboard.press("Escape");
      await sleep(1000);
    }
  }
  throw last;
}

/** Run a command from the palette by its label. */
export async function palette(page, label) {
  await quickInput(page, "F1", `>${label}`, page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first());
}

export async function openFile(page, name) {
  await quickInput(page, "Control+P", name, page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first());
  await page.locator(".tab.active", { hasText: name }).waitFor({ timeout: 15_000 * SLOW });
}

/** A modal dialog makes the rest of the workbench inert: say what it asks. */
export async function noDialog(page) {
  const dialog = page.locator(".monaco-dialog-box");
  if (await dialog.count()) {
    const text = ((await dialog.first().textContent()) ?? "").replace(/\s+/g, " ");
    await screenshot(page, "unexpected-dialog");
    throw new Error(`a modal dialog is open: ${text}`);
  }
}

/** Go to a line; again when the cursor did not get there (the Enter reached a quick input that was closing). */
export async function goToLine(page, line, column = 1) {
  const there = page.locator(".statusbar-item", { hasText: `Ln ${line}, Col ${column}` });
  for (let attempt = 1; ; attempt++) {
    await quickInput(page, "Control+G", `:${line}:${column}`);
    try {
      await there.waitFor({ timeout: 10_000 * SLOW });
      return;
    } catch (e) {
      if (attempt === 3) throw e;
      log(`go to line ${line}:${column}: attempt ${attempt} did not move the cursor`);
    }
  }
}

/** The keyboard in the active text editor: a click into its text when something else holds it. */
export async function editorFocused(page) {
  const focused = page.locator(".editor-group-container.active .monaco-editor.focused");
  for (let attempt = 1; attempt <= 3; attempt++) {
    if (await focused.count()) return;
    log(`the editor does not have the keyboard (attempt ${attempt}): clicking into its text`);
    await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click({ position: { x: 40, y: 10 } });
    await sleep(300);
  }
  assert.ok(await focused.count(), "the active editor never got the keyboard");
}

/** Show the hover at the cursor (Ctrl+K Ctrl+I) until one holding `text` is visible; returns its text. A hover
 * can be asked for before its answer exists (a probe build still running): each miss is logged and asked again. */
export async function untilHover(page, text, ms, what, every = 1000) {
  const hover = page.locator(".monaco-hover", { hasText: text }).first();
  return until(async () => {
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+K");
    await page.keyboard.press("Control+I"); // Show Hover at the cursor
    try {
      await hover.waitFor({ state: "visible", timeout: 3000 });
      return (await hover.textContent()) || " ";
    } catch {
      const said = await page.locator(".monaco-hover").allTextContents().catch(() => []);
      log(`hover so far: ${JSON.stringify(said.map((h) => h.replace(/\s+/g, " ").slice(0, 120)))}`);
      return false;
    }
  }, ms, what, every);
}

/** Open the quick fixes at the cursor (Ctrl+.) until one labelled `label` is offered, and leave the menu open on it.
 * After each miss (menu closed again) `onMiss(offered)` runs: a truthy value ends the wait with that value. */
export async function untilQuickFix(page, label, ms, what, every = 3000, onMiss = async () => false) {
  const item = page.locator(".action-widget .monaco-list-row", { hasText: label }).first();
  return until(async () => {
    await page.keyboard.press("Control+.");
    try {
      await item.waitFor({ state: "visible", timeout: 3000 });
      return item;
    } catch {
      const offered = await page.locator(".action-widget .monaco-list-row").allTextContents().catch(() => []);
      log(`quick fixes offered so far: ${JSON.stringify(offered)}`);
      await page.keyboard.press("Escape");
      return onMiss(offered);
    }
  }, ms, what, every);
}

/** The Problems panel's rows (aria labels say severity, message, line and file). */
export async function problems(page) {
  return page.locator(".markers-panel .monaco-list-row").evaluateAll((rows) =>
    rows.map((r) => r.getAttribute("aria-label") ?? r.textContent ?? ""));
}

/** What the extension's log channel (and so the server's window/logMessage) said so far. */
export function cutegenLog(userData) {
  const root = path.join(userData, "logs");
  if (!fs.existsSync(root)) return "";
  return fs.readdirSync(root, { recursive: true })
    .filter((f) => String(f).endsWith(path.join("cutegen.cutegen", "CuTeGen.log")))
    .map((f) => fs.readFileSync(path.join(root, String(f)), "utf8")).join("\n");
}
