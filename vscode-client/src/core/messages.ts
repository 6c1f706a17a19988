// Remembers which messages the user has just seen, so that a command's reply does not pop up a second
// notification when the server already showed the same text (window/showMessage).

export class RecentMessages {
  private seen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now, private readonly keepMs = 10 * 60_000) {}

  record(text: string): void {
    const t = this.now();
    this.seen.set(normalize(text), t);
    for (const [key, at] of this.seen) {
      if (t - at > this.keepMs) {
        this.seen.delete(key);
      }
    }
  }

  /** Whether `text` was shown at or after `since` (ms). */
  shownSince(text: string, since: number): boolean {
    const at = this.seen.get(normalize(text));
    return at !== undefined && at >= since;
  }
}

function normalize(text: string): string {
  return text.trim().replace(/\s+/g, " ");
}

/**
 * The server shows a command's reply as a message too (`say`: a generic client has no other way to
 * show what a CodeLens command did). When the extension presents the reply itself (a patch as a diff,
 * an applied patch), that message would say the same thing twice. So informational messages that
 * arrive while commands run are held, and shown when the last command ends, except those the
 * extension presented. Warnings and errors are never held.
 */
export class MessageGate {
  private holds = 0;
  private queue: Array<{ text: string; show: () => void }> = [];
  private presented = new Set<string>();

  constructor(private readonly recent: RecentMessages) {}

  offer(text: string, informational: boolean, show: () => void): void {
    if (informational && this.holds > 0) {
      this.queue.push({ text, show });
      return;
    }
    this.recent.record(text);
    show();
  }

  hold(): void {
    this.holds++;
  }

  /** A command ended; `presented` are the texts the extension showed its own way. */
  release(presented: Array<string | undefined> = []): void {
    for (const text of presented) {
      if (text) this.presented.add(normalize(text));
    }
    this.holds = Math.max(0, this.holds - 1);
    if (this.holds > 0) {
      return;
    }
    const queue = this.queue;
    this.queue = [];
    for (const { text, show } of queue) {
      if (!this.presented.has(normalize(text))) {
        this.recent.record(text);
        show();
      }
    }
    this.presented.clear();
  }
}
