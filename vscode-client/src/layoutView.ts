// "CuTeGen: Show Layout": a picture of the CuTe layout under the cursor (a grid of offsets, the banks of a
// shared-memory tile, a TiledCopy's or TiledMMA's thread/value layout) in a webview beside the code.
// The server draws it (`cutegen.server.layoutPicture`) from the probe build's facts; this only shows it.

import * as vscode from "vscode";

import { LAYOUT_PICTURE_COMMAND, SHOW_LAYOUT_COMMAND, layoutPage, layoutTarget, parseLayoutReply } from "./core/layoutPage";

export class LayoutView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** The `cutegen.showLayout` command: from a code action, CodeLens or the page's own links ({uri, line,
   * character[, instantiation]}), from the
   * explorer (a Uri), or from the palette (the active editor's cursor). */
  async show(arg?: unknown): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const cursor = editor
      ? { uri: editor.document.uri.toString(), line: editor.selection.active.line, character: editor.selection.active.character }
      : undefined;
    const where = layoutTarget(arg instanceof vscode.Uri ? arg.toString() : arg, cursor);
    if (!where) {
      void vscode.window.showInformationMessage("CuTeGen: Show Layout works on a CUDA file: put the cursor on a CuTe object.");
      return;
    }
    const target = where.uri;
    const position = { line: where.line, character: where.character };
    let reply: unknown;
    try {
      reply = await vscode.commands.executeCommand(LAYOUT_PICTURE_COMMAND, { ...where, uri: target, ...position });
    } catch (e) {
      reply = { error: `the language server could not draw it: ${e instanceof Error ? e.message : String(e)}` };
    }
    const parsed = parseLayoutReply(reply);
    if (parsed.kind === "error") {
      this.log.info(`show layout at ${target}:${position.line + 1}: ${parsed.message}`);
    }
    const panel = this.ensurePanel(parsed.kind === "picture" ? parsed.title : "CuTe layout");
    panel.webview.html = layoutPage(parsed, nonce(), panel.webview.cspSource);
    panel.reveal(vscode.ViewColumn.Beside, true);
  }

  private ensurePanel(title: string): vscode.WebviewPanel {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel("cutegen.layout", title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        // links to the template's other instantiations run this one command, nothing else
        { enableScripts: false, enableCommandUris: [SHOW_LAYOUT_COMMAND] });
      this.panel.onDidDispose(() => { this.panel = undefined; });
    }
    this.panel.title = title.length > 60 ? `${title.slice(0, 57)}…` : title;
    return this.panel;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

function nonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  for (let i = 0; i < 32; i++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}
