// "CuTeGen: Show Layout": a picture of the CuTe layout under the cursor (a grid of offsets, the banks of a
// shared-memory tile, a TiledCopy's or TiledMMA's thread/value layout) in a webview beside the code.
// The server draws it (`cutegen.server.layoutPicture`) from the probe build's facts; this only shows it.

import * as vscode from "vscode";

import { LAYOUT_PICTURE_COMMAND, SHOW_LAYOUT_COMMAND, layoutPage, parseLayoutReply } from "./core/layoutPage";

export class LayoutView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly command: vscode.Disposable;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.command = vscode.commands.registerCommand(SHOW_LAYOUT_COMMAND, (uri?: unknown, line?: unknown, character?: unknown) =>
      this.show(uri, line, character));
  }

  /** From the palette or a code action/CodeLens: (uri, line, character), else the active editor's cursor. */
  async show(uri?: unknown, line?: unknown, character?: unknown): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const target = typeof uri === "string" ? uri : uri instanceof vscode.Uri ? uri.toString() : editor?.document.uri.toString();
    if (!target) {
      void vscode.window.showInformationMessage("CuTeGen: Show Layout works on a CUDA file: put the cursor on a CuTe object.");
      return;
    }
    const position = typeof line === "number"
      ? { line, character: typeof character === "number" ? character : 0 }
      : { line: editor?.selection.active.line ?? 0, character: editor?.selection.active.character ?? 0 };
    let reply: unknown;
    try {
      reply = await vscode.commands.executeCommand(LAYOUT_PICTURE_COMMAND, { uri: target, ...position });
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
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: false });
      this.panel.onDidDispose(() => { this.panel = undefined; });
    }
    this.panel.title = title.length > 60 ? `${title.slice(0, 57)}…` : title;
    return this.panel;
  }

  dispose(): void {
    this.command.dispose();
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
