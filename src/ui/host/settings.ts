import * as os from 'node:os';
import * as vscode from 'vscode';

/** Typed access to the `marginalia.*` settings (package.json `contributes.configuration`). */
export const settings = {
  /** HTTP tool server port (0: any free port). */
  serverPort: (): number => vscode.workspace.getConfiguration('marginalia').get<number>('server.port', 8765),
  /** Whether the HTTP tool server runs while a project is open. */
  serverEnabled: (): boolean => vscode.workspace.getConfiguration('marginalia').get<boolean>('server.enabled', true),
  /** The researcher's coder name (owner of what they create); the OS user name when unset. */
  coderName: (): string => vscode.workspace.getConfiguration('marginalia').get<string>('coder.name', '').trim() || safeUserName(),
  /** Milliseconds an agent-coded segment flashes. */
  flashMs: (): number => vscode.workspace.getConfiguration('marginalia').get<number>('coding.flashMs', 500),
};

function safeUserName(): string {
  try {
    return os.userInfo().username || 'researcher';
  } catch {
    return 'researcher';
  }
}
