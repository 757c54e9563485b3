import * as vscode from 'vscode';
import type { Logger } from '../../core/log';

/** A {@link Logger} writing to the "Marginalia" output channel (the server log). */
export class OutputLogger implements Logger, vscode.Disposable {
  readonly channel = vscode.window.createOutputChannel('Marginalia', { log: true });

  info(message: string): void {
    this.channel.info(message);
  }
  warn(message: string): void {
    this.channel.warn(message);
  }
  error(message: string, err?: unknown): void {
    this.channel.error(err instanceof Error ? `${message}: ${err.stack ?? err.message}` : message);
  }
  /** Appends a raw line (the HTTP call log). */
  line(text: string): void {
    this.channel.info(text);
  }
  dispose(): void {
    this.channel.dispose();
  }
}
