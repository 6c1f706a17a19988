// The "Show layout" page: the server's picture of a CuTe layout (SVG) in a webview, in light and dark
// themes. Pure functions (no `vscode` import), unit-tested under plain Node.

import { SERVER } from "./commands";

/** The server command that draws the layout at a position (see server/cutegen/lsp/layouts.py). */
export const LAYOUT_PICTURE_COMMAND = SERVER.layoutPicture;
/** The extension's own command (a different id: the language client registers the server's). */
export const SHOW_LAYOUT_COMMAND = "cutegen.showLayout";

export interface LayoutTarget {
  uri: string;
  line: number;
  character: number;
  /** Which instantiation of the template the object is declared in ("BM=16, Element=float"); absent: the first. */
  instantiation?: string;
}

/** Where to draw: a code action's or CodeLens's {uri, line, character}; a file URI (its cursor position
 * if it is the active editor's, else its top); else the active editor's cursor. */
export function layoutTarget(arg: unknown, cursor: LayoutTarget | undefined): LayoutTarget | undefined {
  if (typeof arg === "object" && arg !== null) {
    const a = arg as Record<string, unknown>;
    if (typeof a.uri === "string" && typeof a.line === "number") {
      const target: LayoutTarget = { uri: a.uri, line: a.line, character: typeof a.character === "number" ? a.character : 0 };
      if (typeof a.instantiation === "string") {
        target.instantiation = a.instantiation;
      }
      return target;
    }
  }
  if (typeof arg === "string") {
    return cursor?.uri === arg ? cursor : { uri: arg, line: 0, character: 0 };
  }
  return cursor;
}

export type LayoutReply =
  | { kind: "picture"; title: string; objectKind: string; svg: string; instantiations: string[];
      /** "in gemm_tn<half_t, half_t> (1 of 2)"; "" outside templates */
      shown: string;
      /** the template's other instantiations, each a link that draws it */
      others: { label: string; target: LayoutTarget }[] }
  | { kind: "error"; message: string };

/** The server's reply ({title, kind, svg, instantiations} or {error}) checked field by field. */
export function parseLayoutReply(reply: unknown): LayoutReply {
  if (typeof reply !== "object" || reply === null) {
    return { kind: "error", message: "the language server gave no answer (is it running?)" };
  }
  const r = reply as Record<string, unknown>;
  if (typeof r.error === "string") {
    return { kind: "error", message: r.error };
  }
  if (typeof r.svg !== "string" || !r.svg.includes("<svg")) {
    return { kind: "error", message: "the language server's answer held no picture" };
  }
  const instantiations = Array.isArray(r.instantiations) ? r.instantiations.filter((i): i is string => typeof i === "string") : [];
  const others: { label: string; target: LayoutTarget }[] = [];
  for (const o of Array.isArray(r.others) ? r.others : []) {
    const other = typeof o === "object" && o !== null ? o as Record<string, unknown> : {};
    const target = layoutTarget(other.arguments, undefined);
    if (typeof other.label === "string" && target?.instantiation !== undefined) {
      others.push({ label: other.label, target });
    }
  }
  return {
    kind: "picture",
    title: typeof r.title === "string" ? r.title : "layout",
    objectKind: typeof r.kind === "string" ? r.kind : "",
    svg: r.svg,
    instantiations,
    shown: typeof r.shown === "string" ? r.shown : "",
    others,
  };
}

/** A link that runs `cutegen.showLayout` on `target` (the panel allows command links to that command only). */
export function showLayoutLink(label: string, target: LayoutTarget): string {
  const href = `command:${SHOW_LAYOUT_COMMAND}?${encodeURIComponent(JSON.stringify([target]))}`;
  return `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`;
}

function instantiationsLine(reply: Extract<LayoutReply, { kind: "picture" }>): string {
  if (reply.shown) {
    const others = reply.others.map((o) => showLayoutLink(o.label, o.target));
    return ` · ${escapeHtml(reply.shown)}${others.length ? ` · also: ${others.join(", ")}` : ""}`;
  }
  return reply.instantiations.length > 1 ? ` · instantiations: ${reply.instantiations.map(escapeHtml).join(", ")}` : "";
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** Scripts and event handlers out of an SVG (the page also forbids scripts by its CSP). */
export function inertSvg(svg: string): string {
  return svg
    .replace(/<script[\s\S]*?<\/script\s*>/gi, "")
    .replace(/\son\w+\s*=\s*("[^"]*"|'[^']*')/gi, "")
    .replace(/<!DOCTYPE[^>]*>/i, "");
}

/**
 * The whole page. The picture sits on a light "paper" in both themes (its cells carry their own colours and
 * dark text); the page around it follows the editor's theme through VS Code's CSS variables.
 */
export function layoutPage(reply: LayoutReply, nonce: string, cspSource: string): string {
  const csp = `default-src 'none'; img-src ${cspSource} data:; style-src 'nonce-${nonce}';`;
  const body = reply.kind === "error"
    ? `<p class="error">${escapeHtml(reply.message)}</p>`
    : `<h1>${escapeHtml(reply.title)}</h1>
<p class="meta">${escapeHtml(reply.objectKind)}${instantiationsLine(reply)}</p>
<div class="paper">${inertSvg(reply.svg)}</div>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${nonce}">
  body { color: var(--vscode-foreground); background: var(--vscode-editor-background);
         font-family: var(--vscode-font-family); padding: 8px 16px; }
  h1 { font-family: var(--vscode-editor-font-family); font-size: 1.1em; font-weight: 600; word-break: break-all; }
  .meta { color: var(--vscode-descriptionForeground); }
  .error { color: var(--vscode-errorForeground); }
  .paper { background: #ffffff; color: #000000; display: inline-block; padding: 8px; border-radius: 4px;
           max-width: 100%; overflow: auto; border: 1px solid var(--vscode-panel-border, #8884); }
  body.vscode-dark .paper, body.vscode-high-contrast .paper { box-shadow: 0 0 0 1px #fff3; }
  .paper svg { max-width: none; height: auto; }
</style></head>
<body>
${body}
</body></html>
`;
}
