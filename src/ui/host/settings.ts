import * as vscode from 'vscode';
import type { AgentContextConfig, TrustLevel } from '../../agent/config';
import { researcherCoderName } from '../../cli/coderName';

/** Typed access to the `marginalia.*` settings (package.json `contributes.configuration`). */
export const settings = {
  /** HTTP tool server port (0: any free port). */
  serverPort: (): number => vscode.workspace.getConfiguration('marginalia').get<number>('server.port', 8765),
  /** Whether the HTTP tool server runs while a project is open. */
  serverEnabled: (): boolean => vscode.workspace.getConfiguration('marginalia').get<boolean>('server.enabled', true),
  /** The researcher's coder name (owner of what they create): `marginalia.coder.name`, else git's user.name, else the OS user. */
  coderName: (): string =>
    vscode.workspace.getConfiguration('marginalia').get<string>('coder.name', '').trim() ||
    researcherCoderName({ env: {}, cwd: vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath }),
  /** Milliseconds an agent-coded segment flashes. */
  flashMs: (): number => vscode.workspace.getConfiguration('marginalia').get<number>('coding.flashMs', 500),
  /** Base URL of a local Whisper-compatible transcription server for transcribe_media; undefined when unset. */
  transcriptionEndpoint: (): string | undefined =>
    vscode.workspace.getConfiguration('marginalia').get<string>('transcription.endpoint', '').trim() || undefined,
  /** Whether to offer Marginalia's MCP server to VS Code itself (off: Copilot already has the LM tools). */
  provideMcpServer: (): boolean => vscode.workspace.getConfiguration('marginalia').get<boolean>('mcp.provideServerDefinition', false),
  /** Whether codebook health problems are listed in the Problems panel. */
  codebookHealthEnabled: (): boolean => vscode.workspace.getConfiguration('marginalia').get<boolean>('codebookHealth.enabled', true),
  /** Coded passages the project holds before codebook health names codes used only once (0: always). */
  codebookHealthUsedOnceAfter: (): number =>
    Math.max(0, Math.floor(vscode.workspace.getConfiguration('marginalia').get<number>('codebookHealth.usedOnceAfter', 50))),
};

/**
 * Applies the VS Code settings that override `.marginalia/config.yaml` (docs/architecture.md: "overridable by VS
 * Code settings"): trust default level and per-tool overrides, rate limits, audit payloads. Overrides that
 * the trust rules refuse are reported through `reject` and skipped.
 */
export function applySettingOverrides(
  cfg: AgentContextConfig,
  check: (pattern: string, level: TrustLevel) => string | undefined,
  reject: (message: string) => void,
): AgentContextConfig {
  const c = vscode.workspace.getConfiguration('marginalia');
  const out: AgentContextConfig = structuredClone(cfg);
  const def = c.get<TrustLevel | ''>('trust.defaultLevel', '');
  if (def) out.trust.default_level = def;
  const overrides = c.get<Record<string, TrustLevel>>('trust.overrides', {});
  for (const [pattern, level] of Object.entries(overrides)) {
    const why = check(pattern, level);
    if (why) reject(`marginalia.trust.overrides.${pattern}: ${why}`);
    else out.trust.overrides[pattern] = level;
  }
  const rpm = c.get<number>('rateLimits.requestsPerMinute', 0);
  if (rpm > 0) out.rate_limits.requests_per_minute = rpm;
  const mpm = c.get<number>('rateLimits.mutationsPerMinute', 0);
  if (mpm > 0) out.rate_limits.mutations_per_minute = mpm;
  const payload = c.inspect<boolean>('audit.includePayload');
  const chosen = payload?.workspaceValue ?? payload?.globalValue;
  if (chosen !== undefined) out.audit.include_payload = chosen;
  return out;
}
