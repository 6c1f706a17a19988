// "CuTeGen: Profile Lines": the per-line profile's picture in a webview beside the code. The server profiles
// and draws (`cutegen.server.profileLines`); this only shows its reply.

import * as vscode from "vscode";

import { linesPage, parseLinesReply } from "./core/linesPage";

export class LinesView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  /** Shows a profileLines reply that holds a picture; other replies (a refusal, an error) were messaged already. */
  show(reply: unknown): void {
    const parsed = parseLinesReply(reply);
    if (parsed.kind === "error") {
      return;
    }
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel("cutegen.lines", "CuTeGen: hot lines",
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: false });
      this.panel.onDidDispose(() => { this.panel = undefined; });
    }
    this.panel.title = parsed.title.length > 60 ? `${parsed.title.slice(0, 57)}…` : parsed.title;
    this.panel.webview.html = linesPage(parsed, nonce(), this.panel.webview.cspSource);
    this.panel.reveal(vscode.ViewColumn.Beside, true);
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
