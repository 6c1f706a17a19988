// The "Profile Lines" page: the server's picture of a per-line profile (a heat strip of the source beside a
// stall-reason bar per hot line, SVG drawn by server/cutegen/profiler/lens_picture.py) and the hot lines as a
// table. Pure functions (no `vscode` import), unit-tested under plain Node.

import { SERVER } from "./commands";
import { escapeHtml, inertSvg } from "./layoutPage";

export const PROFILE_LINES_COMMAND = SERVER.profileLines;

export interface HotLine {
  line: number;
  share: number;
  text: string;
  stalls: Record<string, number>;
}

export type LinesReply =
  | { kind: "picture"; title: string; svg: string; stale: boolean; lines: HotLine[] }
  | { kind: "error"; message: string };

/** The server's reply ({ok, title, svg, stale, lines} or {ok: false, message}) checked field by field. */
export function parseLinesReply(reply: unknown): LinesReply {
  if (typeof reply !== "object" || reply === null) {
    return { kind: "error", message: "the language server gave no answer (is it running?)" };
  }
  const r = reply as Record<string, unknown>;
  if (typeof r.svg !== "string" || !r.svg.includes("<svg")) {
    return { kind: "error", message: typeof r.message === "string" ? r.message : "the answer held no picture" };
  }
  const lines = Array.isArray(r.lines) ? r.lines.filter(isHotLine) : [];
  return { kind: "picture", title: typeof r.title === "string" ? r.title : "line profile", svg: r.svg,
           stale: r.stale === true, lines };
}

function isHotLine(x: unknown): x is HotLine {
  if (typeof x !== "object" || x === null) return false;
  const h = x as Record<string, unknown>;
  return typeof h.line === "number" && typeof h.share === "number" && typeof h.stalls === "object" && h.stalls !== null;
}

/** The top stall reasons of a line, largest first, as "long_scoreboard 78 %, wait 8 %". */
export function stallText(h: HotLine, n = 3): string {
  const total = Object.values(h.stalls).reduce((a, b) => a + b, 0) || 1;
  return Object.entries(h.stalls).sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([reason, count]) => `${reason} ${Math.round((100 * count) / total)} %`).join(", ");
}

export function linesPage(reply: LinesReply, nonce: string, cspSource: string): string {
  const csp = `default-src 'none'; img-src ${cspSource} data:; style-src 'nonce-${nonce}';`;
  const body = reply.kind === "error"
    ? `<p class="error">${escapeHtml(reply.message)}</p>`
    : `<h1>${escapeHtml(reply.title)}</h1>
${reply.stale ? '<p class="stale">The file changed since this profile: the lines below are those of the profiled text. Run Profile Lines again.</p>' : ""}
<div class="paper">${inertSvg(reply.svg)}</div>
<table><tr><th>line</th><th>share</th><th>stalls</th><th>source</th></tr>
${reply.lines.map((h) => `<tr><td>${h.line}</td><td>${(100 * h.share).toFixed(1)} %</td><td>${escapeHtml(stallText(h))}</td>` +
    `<td><code>${escapeHtml(h.text ?? "")}</code></td></tr>`).join("\n")}
</table>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<style nonce="${nonce}">
  body { color: var(--vscode-foreground); background: var(--vscode-editor-background);
         font-family: var(--vscode-font-family); padding: 8px 16px; }
  h1 { font-size: 1.1em; font-weight: 600; }
  .error, .stale { color: var(--vscode-errorForeground); }
  .paper { background: #ffffff; color: #000000; display: inline-block; padding: 8px; border-radius: 4px;
           max-width: 100%; box-sizing: border-box; }
  .paper svg { max-width: 100%; height: auto; }
  table { border-collapse: collapse; margin-top: 12px; }
  td, th { padding: 2px 8px; text-align: left; border-bottom: 1px solid var(--vscode-panel-border, #8884); }
</style></head>
<body>
${body}
</body></html>
`;
}
