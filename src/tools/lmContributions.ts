import { z } from 'zod';
import type { AnyTool } from './defineTool';
import { TOOLS } from './registry';

/** The `contributes.languageModelTools` entry of one tool (VS Code's IRawToolContribution). */
export interface LmToolContribution {
  name: string;
  displayName: string;
  toolReferenceName: string;
  canBeReferencedInPrompt: boolean;
  modelDescription: string;
  userDescription: string;
  icon: string;
  tags: string[];
  inputSchema: Record<string, unknown>;
}

/** `qda_<tool name>`: VS Code language-model tool names (docs/architecture.md: VS Code forbids dots). */
export function lmToolName(toolName: string): string {
  return `qda_${toolName}`;
}

const ICONS: Record<string, string> = { read: '$(search)', create: '$(add)', modify: '$(edit)', destroy: '$(trash)', bulk: '$(layers)' };

/** The contribution of one tool, derived from the registry entry only. */
export function lmContribution(t: AnyTool): LmToolContribution {
  const { $schema: _schema, ...inputSchema } = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    name: lmToolName(t.name),
    displayName: t.title,
    toolReferenceName: t.name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
    canBeReferencedInPrompt: true,
    modelDescription: t.description,
    userDescription: t.title,
    icon: ICONS[t.effect] ?? '$(tools)',
    tags: ['qda', 'marginalia', t.effect === 'read' ? 'qda-read' : 'qda-write', `qda-${t.group}`],
    inputSchema,
  };
}

/**
 * Every agent-facing tool as `contributes.languageModelTools`, in registry order. Written into
 * package.json by scripts/genContributes.ts; a unit test and `npm run check` fail when they drift.
 */
export function lmContributions(): LmToolContribution[] {
  return TOOLS.filter((t) => (t.audience ?? 'agents') === 'agents').map(lmContribution);
}
