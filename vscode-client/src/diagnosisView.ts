// Shows a diagnosis rendered: a read-only virtual Markdown document opened in VS Code's Markdown preview,
// beside the kernel (the raw text only if the preview is unavailable).

import * as vscode from "vscode";

import { DIAGNOSIS_SCHEME, Diagnosis, diagnosisDocument, diagnosisPath } from "./core/diagnosis";

export class DiagnosisView implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  async show(file: string, diagnosis: Diagnosis): Promise<void> {
    const uri = vscode.Uri.from({ scheme: DIAGNOSIS_SCHEME, path: diagnosisPath(file) });
    this.texts.set(uri.toString(), diagnosisDocument(file, diagnosis));
    this.changed.fire(uri);
    try {
      await vscode.commands.executeCommand("markdown.showPreviewToSide", uri);
    } catch {
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
