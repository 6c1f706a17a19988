// Renders the status model into one status bar item; a click shows the log (or cancels the background run).

import * as vscode from "vscode";

import { StatusModel } from "./core/status";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly model: StatusModel) {
    this.item = vscode.window.createStatusBarItem("cutegen.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "CuTeGen";
    model.onChange(() => this.render());
    this.render();
    this.item.show();
  }

  private render(): void {
    const view = this.model.view();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.level === "normal" ? undefined
      : new vscode.ThemeColor(view.level === "error" ? "statusBarItem.errorBackground" : "statusBarItem.warningBackground");
    // While something runs, refresh the elapsed seconds in the tooltip.
    if (this.model.busy && !this.timer) {
      this.timer = setInterval(() => this.render(), 1000);
    } else if (!this.model.busy && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
    this.item.dispose();
  }
}
