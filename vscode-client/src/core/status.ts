// The status bar's state: what the server is doing now (possibly several things), the last verdict,
// and whether the server runs at all. Pure: the vscode side only renders `view()`.

import { Verdict } from "./results";

export type Activity =
  | "checking" | "testing" | "timing" | "profiling" | "optimizing" | "fixing" | "tuning" | "generating"
  | "restoring" | "applying" | "sanitizing";

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** Server command id (last part) → what the status bar says while it runs. */
const ACTIVITY_OF: Record<string, Activity> = {
  check: "checking", test: "testing", profile: "profiling", optimize: "optimizing",
  fix: "fixing", diagnose: "fixing", tune: "tuning", generate: "generating",
  restoreBest: "restoring", restoreVersion: "restoring", applyPatch: "applying", profileLines: "profiling", sanitize: "sanitizing",
};

export function activityOf(serverCommand: string): Activity {
  return ACTIVITY_OF[serverCommand.split(".").pop() ?? ""] ?? "checking";
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** "error" and "warning" colour the item's background. */
  level: "normal" | "warning" | "error";
  /** What a click runs: the log, or the cancel of the background run that is running now. */
  command: string;
}

interface Running {
  activity: Activity;
  file: string;
  since: number;
  /** A command that stops it (a background run: no request waits for it, so no Cancel button does). */
  cancel?: string;
}

export class StatusModel {
  private running = new Map<number, Running>();
  private nextId = 1;
  private verdict: (Verdict & { at: number; stale?: boolean }) | undefined;
  private server: ServerState = "starting";
  private serverDetail = "";
  private listeners: Array<() => void> = [];

  constructor(private readonly now: () => number = Date.now) {}

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Something started; returns the handle to end it with. */
  begin(activity: Activity, file: string, cancel?: string): number {
    const id = this.nextId++;
    this.running.set(id, { activity, file, since: this.now(), cancel });
    this.changed();
    return id;
  }

  end(handle: number): void {
    if (this.running.delete(handle)) {
      this.changed();
    }
  }

  setVerdict(verdict: Verdict | undefined): void {
    if (verdict) {
      this.verdict = { ...verdict, at: this.now() };
      this.changed();
    }
  }

  /** The file changed since the last verdict: it is about an older text now. */
  markStale(): void {
    if (this.verdict && !this.verdict.stale) {
      this.verdict.stale = true;
      this.changed();
    }
  }

  setServer(state: ServerState, detail = ""): void {
    this.server = state;
    this.serverDetail = detail;
    if (state !== "running") {
      this.running.clear(); // nothing runs without a server
    }
    this.changed();
  }

  get busy(): boolean {
    return this.running.size > 0;
  }

  /** The newest running activity (the one the user most likely waits for). */
  current(): Running | undefined {
    let newest: Running | undefined;
    for (const r of this.running.values()) {
      if (!newest || r.since >= newest.since) {
        newest = r;
      }
    }
    return newest;
  }

  view(): StatusView {
    const lines = [`CuTeGen language server: ${this.server}${this.serverDetail ? ` (${this.serverDetail})` : ""}`];
    for (const r of this.running.values()) {
      lines.push(`${r.activity} ${r.file} (${Math.round((this.now() - r.since) / 1000)} s)`);
    }
    const stale = this.verdict?.stale ? " (stale: the file changed since)" : "";
    if (this.verdict) {
      lines.push(`Last result: ${this.verdict.text}${stale} (${clock(this.verdict.at)})`);
    }
    const now = this.current();
    const command = now?.cancel ?? "cutegen.showLog";
    lines.push(now?.cancel ? `Click to cancel ${now.activity} ${now.file}.` : "Click to show the CuTeGen log.");
    const tooltip = lines.join("\n");

    if (this.server === "failed" || this.server === "stopped") {
      return { text: `$(error) CuTeGen: server ${this.server}`, tooltip, level: "error", command };
    }
    if (this.server === "starting") {
      return { text: "$(sync~spin) CuTeGen: starting", tooltip, level: "normal", command };
    }
    if (now) {
      const more = this.running.size > 1 ? ` (+${this.running.size - 1})` : "";
      return { text: `$(sync~spin) CuTeGen: ${now.activity} ${now.file}${more}`, tooltip, level: "normal", command };
    }
    if (!this.verdict) {
      return { text: "$(circle-large-outline) CuTeGen: idle", tooltip, level: "normal", command };
    }
    const icon = { ok: "$(pass)", warning: "$(warning)", error: "$(error)", info: "$(info)" }[this.verdict.level];
    const level = this.verdict.level === "error" ? "error" : this.verdict.level === "warning" ? "warning" : "normal";
    const text = shorten(this.verdict.text, this.verdict.stale ? 92 : 100) + (this.verdict.stale ? " (stale)" : "");
    return { text: `${icon} CuTeGen: ${text}`, tooltip, level, command };
  }

  private changed(): void {
    for (const listener of this.listeners) {
      listener();
    }
  }
}

function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function clock(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}
