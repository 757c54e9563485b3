import * as vscode from 'vscode';

/** How long a feedback message stays in the status bar (milliseconds). */
export const STATUS_FEEDBACK_MS = 5000;

let last: { text: string; at: number } | undefined;

/**
 * Shows a short confirmation in the status bar ("Coded with 'Belonging' in interview-04") for
 * `ms` milliseconds and remembers it, so tests can read what the researcher was told
 * ({@link lastStatusFeedback}); VS Code offers no way to read the status bar back.
 */
export function showStatusFeedback(text: string, ms = STATUS_FEEDBACK_MS): vscode.Disposable {
  last = { text, at: Date.now() };
  return vscode.window.setStatusBarMessage(text, ms);
}

/** The last text {@link showStatusFeedback} showed and when (`at`: milliseconds since the epoch), or undefined. */
export function lastStatusFeedback(): { text: string; at: number } | undefined {
  return last;
}
