/**
 * The extension's agent credentials follow the open project (src/ui/agents/credentialStore.ts): each project its
 * own list, the same file the CLI uses; another project's agents are gone (reported as revoked) once it opens.
 */
import assert from 'node:assert/strict';
import { AgentCredentials, memoryCredentialStorage, type AgentCredentialStorage } from '../../../src/agent/agentCredentials';
import { openProjectCredentialStorage } from '../../../src/ui/agents/credentialStore';

describe('ui/agents/credentialStore', () => {
  const stores = new Map<string, AgentCredentialStorage>();
  const storageOf = (p: string) => {
    if (!stores.has(p)) stores.set(p, memoryCredentialStorage());
    return stores.get(p)!;
  };

  it('reads and writes the open project’s store; none without a project', () => {
    let open: string | undefined;
    const creds = new AgentCredentials(openProjectCredentialStorage(() => open, storageOf));
    assert.deepEqual(creds.list(), []);
    assert.throws(() => creds.issue('Claude'), /Open a project first/);
    open = '/a/study.qda';
    const { token } = creds.issue('Claude');
    assert.deepEqual(
      creds.list().map((c) => c.name),
      ['Claude'],
    );
    assert.deepEqual(
      stores
        .get('/a/study.qda')!
        .read()
        .map((c) => c.name),
      ['Claude'],
    );
    assert.equal(creds.identify(token), 'Claude');

    const gone: string[] = [];
    creds.onRevoked((n) => gone.push(n));
    open = '/b/other.qda';
    assert.deepEqual(creds.list(), [], "another project: the first one's agents are not listed");
    assert.deepEqual(gone, ['Claude'], 'and count as gone (their sessions end)');
    assert.equal(creds.identify(token), null, "the first project's token does not open the second");
    creds.issue('Cursor');
    assert.deepEqual(
      stores
        .get('/b/other.qda')!
        .read()
        .map((c) => c.name),
      ['Cursor'],
    );

    open = '/a/study.qda';
    assert.deepEqual(
      creds.list().map((c) => c.name),
      ['Claude'],
      'back again: still there',
    );
    assert.equal(creds.identify(token), 'Claude');
  });
});
