// What the server's commands answer, read defensively: the server is another program (and another
// engineer's), so every field is checked before it is used. No `vscode` import: unit-tested under Node.

/** A proposed change to one file, as the server's fix/optimize/tune/generate/restoreBest return it. */
export interface Patch {
  id: string;
  /** The file the patch changes (a `file:` URI). */
  uri: string;
  /** The document version the patch was made against (null: the file on disk). */
  version: number | null;
  /** Unified diff, for the log and for clients without a diff view. */
  diff: string;
  /** The whole file after the patch: the right side of the diff view. */
  newText: string;
  /** One line saying how far the patch was verified, e.g. "compiled and built · not run: no GPU". */
  verified: string;
  /** Measured figures, one readable line each. */
  figures: string[];
  /** What a search found, in one sentence (describeSearch), when the patch is a search's best version. */
  search?: string;
}

export interface Verdict {
  /** Short text for the status bar, e.g. "softsign.cu: pass". */
  text: string;
  level: "ok" | "warning" | "error" | "info";
}

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The patch in a reply ({"patch": {...}}), or undefined when the reply carries none. */
export function patchOf(reply: unknown): Patch | undefined {
  if (!isObject(reply) || !isObject(reply.patch)) {
    return undefined;
  }
  const p = reply.patch;
  const uri = str(p.uri);
  const newText = str(p.new_text) ?? str(p.newText);
  if (!uri || newText === undefined) {
    return undefined; // nothing to show or apply
  }
  const id = str(p.id) ?? (typeof p.id === "number" ? String(p.id) : undefined);
  const search = describeSearch(p.figures);
  return {
    id: id ?? `local-${hash(uri + "\n" + newText)}`,
    uri,
    version: typeof p.version === "number" ? p.version : null,
    diff: str(p.diff) ?? "",
    newText,
    verified: str(p.verified) ?? "not verified",
    figures: formatFigures(search && isObject(p.figures) ? withoutSearchFigures(p.figures) : p.figures),
    ...(search ? { search } : {}),
  };
}

/** How each objective's ratio reads (agent/objective.py WORDS[...].better): "1.42× faster than the start". */
const OBJECTIVE_WORDS: Record<string, string> = {
  time: "faster", energy: "less energy per call", edp: "lower energy × delay",
};
/** The figures of a search's proposal (agent/search.py proposal_label, Agent.search) that its sentence says. */
const SEARCH_FIGURES = new Set(["search", "tree_size", "best", "chain", "gain", "noise", "objective", "shape"]);

function withoutSearchFigures(figures: Json): Json {
  return Object.fromEntries(Object.entries(figures).filter(([key]) => !SEARCH_FIGURES.has(key)));
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * A search's figures as one sentence: "Search: 3 of 12 candidates verified, best 3fa2c1d0e9 1.42× ±3% faster than
 * the start (beam 2x2, 3 steps)". Undefined when the figures are not a search's (no `search` stats).
 */
export function describeSearch(figures: unknown): string | undefined {
  if (!isObject(figures) || !isObject(figures.search)) {
    return undefined;
  }
  const stats = figures.search;
  const candidates = num(stats.candidates) ?? 0;
  const verified = num(stats.verified);
  const found = verified === undefined ? plural(candidates, "candidate")
    : `${verified} of ${plural(candidates, "candidate")} verified`;
  const best = str(figures.best);
  let result = "no verified better version";
  if (best) {
    const gain = num(figures.gain);
    const noise = num(figures.noise);
    const objective = str(figures.objective) ?? "time";
    const word = OBJECTIVE_WORDS[objective] ?? `better by ${objective}`;
    result = `best ${best.slice(0, 10)}` + (gain === undefined ? ", speed not measured"
      : ` ${gain.toFixed(2)}×${noise === undefined ? "" : ` ±${Math.round(noise * 100)}%`} ${word} than the start`);
  }
  const shape = str(figures.shape)?.replace(":", " ");
  const steps = num(stats.steps);
  const stop = str(stats.stop);
  const how = [shape, steps === undefined ? undefined : plural(steps, "step")].filter(Boolean).join(", ");
  const stopped = stop && !/^\d+ step\(s\) done$/.test(stop) ? `stopped: ${stop}` : ""; // a budget, a cancel
  const notes = [how, stopped].filter(Boolean).join("; ");
  return `Search: ${found}, ${result}` + (notes ? ` (${notes})` : "");
}

/** The reply's message, if any. */
export function messageOf(reply: unknown): string | undefined {
  return isObject(reply) ? str(reply.message) : undefined;
}

export function wasCancelled(reply: unknown): boolean {
  return isObject(reply) && reply.cancelled === true;
}

/**
 * Figures as lines: a string stays as it is, a list gives one line per item, an object one line per
 * key ("speedup: 1.84×" for {"speedup": 1.84}); {"value": v, "unit": u} reads "v u".
 */
export function formatFigures(figures: unknown): string[] {
  if (figures === undefined || figures === null) {
    return [];
  }
  if (typeof figures === "string") {
    return figures.trim() ? [figures.trim()] : [];
  }
  if (Array.isArray(figures)) {
    return figures.flatMap((f) => (isObject(f) && (f.name !== undefined || f.label !== undefined)
      ? [`${String(f.name ?? f.label)}: ${formatValue(f, "")}`]
      : formatFigures(f)));
  }
  if (isObject(figures)) {
    return figureLines(figures);
  }
  return [formatValue(figures, "")];
}

/** How the agent's verification figures read; the order is the order shown. */
const KNOWN_FIGURES: Array<[string, (v: number, all: Json) => string]> = [
  ["speedup", (v) => `${v.toFixed(2)}× faster`],
  ["median_ms", (v) => `median ${sig(v)} ms`],
  ["baseline_ms", (v) => `before ${sig(v)} ms`],
  ["gb_per_s", (v) => `${v.toFixed(0)} GB/s`],
  ["j_per_call", (v) => (v >= 1 ? `${sig(v)} J/call` : `${sig(v * 1000)} mJ/call`)],
  ["tflops", (v) => `${sig(v)} TFLOP/s`],
  ["check_s", (v, all) => `check ${v.toFixed(1)} s${all.check_cached === true ? " (cached)" : ""}`],
  ["build_s", (v, all) => `build ${v.toFixed(1)} s${all.build_cached === true ? " (cached)" : ""}`],
  ["test_s", (v) => `test ${v.toFixed(1)} s`],
  ["time_s", (v) => `timing ${v.toFixed(1)} s`],
  ["rounds", (v) => plural(v, "round")],
];
/** Bookkeeping that the verified label already says (or that says nothing to a reader). */
const HIDDEN_FIGURES = /^(gpu|tiers|timing_trials|energy_spread)$|_cached$/;

function figureLines(figures: Json): string[] {
  const out: string[] = [];
  const done = new Set<string>();
  for (const [key, format] of KNOWN_FIGURES) {
    const v = figures[key];
    if (typeof v === "number" && Number.isFinite(v)) {
      out.push(format(v, figures));
      done.add(key);
    }
  }
  for (const [key, v] of Object.entries(figures)) {
    if (done.has(key) || HIDDEN_FIGURES.test(key) || v === null || v === undefined || typeof v === "boolean") {
      continue;
    }
    out.push(`${humanize(key)}: ${Array.isArray(v) ? v.map(String).join(", ") : formatValue(v, key)}`);
  }
  return out;
}

function sig(v: number): string {
  return Number(v.toPrecision(3)).toString();
}

function formatValue(value: unknown, key: string): string {
  if (isObject(value)) {
    if ("value" in value) {
      const unit = str(value.unit);
      return unit ? `${formatValue(value.value, key)} ${unit}` : formatValue(value.value, key);
    }
    return JSON.stringify(value);
  }
  if (typeof value === "number") {
    const text = Number.isInteger(value) ? String(value) : Number(value.toPrecision(3)).toString();
    return /speedup/i.test(key) ? `${text}×` : text;
  }
  return String(value);
}

/** "time_ms" → "time (ms)", "maxAbsError" → "max abs error". */
export function humanize(key: string): string {
  const spaced = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();
  const unit = spaced.match(/^(.*) (ms|us|ns|s|gb|tbs|gbs)$/);
  if (unit) {
    const label = { tbs: "TB/s", gbs: "GB/s", gb: "GB" }[unit[2]] ?? unit[2];
    return `${unit[1]} (${label})`;
  }
  return spaced;
}

/** The levels a run's reply may carry: the server decides them (harness/verdicts.py, profiler/signals.py). */
const RUN_LEVELS = new Set(["ok", "info", "error"]);

/** What the status bar keeps after a server command ends. */
export function verdictOf(command: string, file: string, reply: unknown): Verdict | undefined {
  if (!isObject(reply)) {
    return undefined;
  }
  if (wasCancelled(reply)) {
    return { text: `${file}: cancelled`, level: "info" };
  }
  const patch = patchOf(reply);
  if (patch) {
    return { text: `${file}: patch proposed (${patch.verified})`, level: "info" };
  }
  const kind = command.split(".").pop() ?? command;
  if ((kind === "test" || kind === "profile") && typeof reply.verdict === "string") {
    // The record's one-line summary (what CodeLens, hovers and the CLI show) and the level the server gave
    // the verdict: the extension keeps no verdict list of its own.
    const level = typeof reply.level === "string" && RUN_LEVELS.has(reply.level) ? reply.level : "error";
    const summary = str(reply.summary) ?? reply.verdict;
    return { text: `${file}: ${summary}`, level: level as Verdict["level"] };
  }
  if (kind === "check" && typeof reply.errors === "number") {
    return reply.errors === 0
      ? { text: `${file}: compiles`, level: "ok" }
      : { text: `${file}: ${plural(reply.errors, "error")}`, level: "error" };
  }
  if (kind === "applyPatch") {
    return reply.applied === true
      ? { text: `${file}: patch applied`, level: "ok" }
      : { text: `${file}: patch not applied`, level: "warning" };
  }
  const message = str(reply.message);
  if (message === undefined) {
    return undefined;
  }
  if (kind === "diagnose") {
    // An explanation opened beside the code: news, not a verdict (the file still has its error).
    return { text: `${file}: explained: ${firstLine(plainText(message), 80)}`, level: "info" };
  }
  return { text: `${file}: ${firstLine(plainText(message))}`, level: reply.ok === false ? "warning" : "ok" };
}

/** Markdown as the status bar can show it: no emphasis marks, code ticks, heading or quote marks; links as their text. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|`)/g, "")
    .replace(/^\s*(#+|>)\s*/gm, "");
}

/** The verdict of a published set of diagnostics (a check that ran on open or save). */
export function diagnosticsVerdict(file: string, errors: number, warnings: number): Verdict {
  if (errors) {
    return { text: `${file}: ${plural(errors, "error")}`, level: "error" };
  }
  if (warnings) {
    return { text: `${file}: ${plural(warnings, "warning")}`, level: "warning" };
  }
  return { text: `${file}: compiles`, level: "ok" };
}

/** The verdict of diagnostics published for unsaved text (the type tier, clang's front end, as the user types):
 * nvcc has not seen this text, so it never says "compiles". */
export function typingVerdict(file: string, errors: number, warnings: number): Verdict {
  if (errors) {
    return { text: `${file}: ${plural(errors, "error")} while typing`, level: "error" };
  }
  if (warnings) {
    return { text: `${file}: ${plural(warnings, "warning")} while typing`, level: "warning" };
  }
  return { text: `${file}: no errors while typing (unsaved)`, level: "info" };
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function firstLine(text: string, max = 80): string {
  const line = text.split("\n", 1)[0].trim();
  if (line.length <= max) {
    return line;
  }
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return (space > max / 2 ? cut.slice(0, space) : cut) + "…"; // between words where there is a space
}

/** The text shown with a proposal: what was verified, then the figures. */
export function describePatch(patch: Patch, file: string): string {
  const figures = patch.figures.length ? ` Measured: ${patch.figures.join(" · ")}.` : "";
  const search = patch.search ? ` ${patch.search}.` : "";
  return `CuTeGen proposes a change to ${file}. Verified: ${patch.verified}.${search}${figures}`;
}

function hash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return (h >>> 0).toString(16);
}
