// Processes and browser for the end-to-end test: a scripted LLM endpoint, code-server with the packaged
// extension, and Debian's Chromium driven by playwright-core. Everything started here is killed at the
// end (whole process trees: the language server and its nvcc run under code-server).

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const extensionDir = path.resolve(here, "..", "..");
export const repo = path.resolve(extensionDir, "..");

/** Where screenshots and logs go: vscode-client/test-artifacts/, and $CUTEGEN_ARTIFACTS or $OUT too (`suite`: a
 * folder of one test's own under each). */
export function artifactDirs(suite = "") {
  const dirs = [path.join(extensionDir, "test-artifacts", suite)];
  for (const extra of [process.env.CUTEGEN_ARTIFACTS, process.env.OUT]) {
    if (extra) dirs.push(path.join(extra, "vscode-e2e", suite));
  }
  for (const d of dirs) fs.mkdirSync(d, { recursive: true });
  return [...new Set(dirs)];
}

export function saveArtifact(name, data, suite = "") {
  for (const dir of artifactDirs(suite)) fs.writeFileSync(path.join(dir, name), data);
}

export function copyArtifactTree(source, name, suite = "") {
  if (!fs.existsSync(source)) return;
  for (const dir of artifactDirs(suite)) fs.cpSync(source, path.join(dir, name), { recursive: true, force: true });
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** All live descendants of `pid` (from /proc), deepest first. */
function descendants(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const walk = (p) => {
    for (const c of children.get(p) ?? []) {
      walk(c);
      out.push(c);
    }
  };
  walk(pid);
  return out;
}

/** Processes this test started, killed together at the end. */
export class Processes {
  constructor(log) {
    this.log = log;
    this.started = [];
  }

  /** Start a process in its own process group; its output goes to `logFile`. */
  start(name, command, args, options = {}) {
    const logFile = options.logFile;
    const out = logFile ? fs.openSync(logFile, "a") : "ignore";
    const child = spawn(command, args, {
      cwd: options.cwd, env: options.env ?? process.env, detached: true,
      stdio: ["ignore", options.pipeStdout ? "pipe" : out, out],
    });
    child.on("error", (e) => this.log(`${name}: ${e.message}`));
    this.started.push({ name, child });
    if (process.env.CUTEGEN_E2E_PIDFILE && child.pid) {
      fs.appendFileSync(process.env.CUTEGEN_E2E_PIDFILE, `${child.pid}\n`); // its process group, for the script's cleanup
    }
    this.log(`started ${name} (pid ${child.pid}): ${command} ${args.join(" ")}`);
    return child;
  }

  async killAll() {
    for (const { name, child } of this.started.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const tree = [...descendants(child.pid), child.pid];
      for (const signal of ["SIGTERM", "SIGKILL"]) {
        for (const pid of tree) {
          try {
            process.kill(pid, signal);
          } catch {
            // already gone
          }
        }
        try {
          process.kill(-child.pid, signal); // the rest of its process group
        } catch {
          // no such group
        }
        const deadline = Date.now() + 5000;
        while (Date.now() < deadline && tree.some(alive)) await sleep(100);
        if (!tree.some(alive)) break;
      }
      this.log(`stopped ${name}`);
    }
    this.started = [];
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return !fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** Wait until `probe()` returns a truthy value; fail with `what` after `ms`. */
export async function until(probe, ms, what, every = 500) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(every);
  }
  throw new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}` +
    (last instanceof Error ? ` (last error: ${last.message})` : ""));
}

export async function httpOk(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** The first line a child prints on stdout. */
export function firstLine(child, ms, what) {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    child.stdout.on("data", (chunk) => {
      buffer += chunk.toString();
      const nl = buffer.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(buffer.slice(0, nl).trim());
      }
    });
    child.on("exit", (code) => reject(new Error(`${what}: the process exited (${code}) first`)));
  });
}

export function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 300_000, ...options });
  if (r.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
