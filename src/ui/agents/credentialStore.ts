import type { AgentCredentialStorage } from '../../agent/agentCredentials';

/**
 * The agent credentials of whichever project is open, for the extension's one AgentContext (issue 14 item 2):
 * reads and writes go to `storageOf(path)` of the project `projectPath()` names (in the extension the same
 * per-project file `marginalia agent add|list|revoke --project P` uses, src/cli/credentials.ts), so VS Code and
 * the CLI see the same agents. The stamp holds the project's path: opening another project reloads the list,
 * and the previous project's agents count as gone (their sessions end). No project open: no credentials, and
 * a write fails with a plain Error ("Open a project first").
 */
export function openProjectCredentialStorage(
  projectPath: () => string | undefined,
  storageOf: (projectPath: string) => AgentCredentialStorage,
): AgentCredentialStorage {
  let cached: { path: string; storage: AgentCredentialStorage } | undefined;
  const current = (): AgentCredentialStorage | undefined => {
    const p = projectPath();
    if (p === undefined) return undefined;
    if (cached?.path !== p) cached = { path: p, storage: storageOf(p) };
    return cached.storage;
  };
  return {
    read: () => current()?.read() ?? [],
    write: (list) => {
      const s = current();
      if (!s) throw new Error('Open a project first: agent credentials belong to a project.');
      s.write(list);
    },
    stamp: () => {
      const p = projectPath();
      return p === undefined ? 'no project' : `${p}\n${current()?.stamp?.() ?? ''}`;
    },
  };
}
