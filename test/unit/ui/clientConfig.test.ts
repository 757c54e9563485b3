/**
 * What Connect an Agent writes (src/ui/agents/clientConfig.ts): the MCP entry of each client (Streamable HTTP with
 * the credential in an Authorization header while the tool server runs; otherwise stdio under VS Code's own
 * runtime with ELECTRON_RUN_AS_NODE=1, never a bare `node`), merged into an existing configuration file without
 * touching other servers or keys, refused (nothing to write) when that file is not a JSON object; agent names
 * validated; the Connected Agents view's descriptions in words.
 */
import assert from 'node:assert/strict';
import {
  agentDescription,
  agentNameProblem,
  agentState,
  ConfigFileError,
  gitignoreCovers,
  mcpClientConfig,
  mcpServerEntry,
  mergeMcpConfig,
  relativeTime,
  sessionDescription,
} from '../../../src/ui/agents/clientConfig';

const TOKEN = 'tok_abc-123';
const running = { port: 47291, token: TOKEN, projectPath: '/study/study.qda', cli: '/ext/bin/marginalia.js', execPath: '/opt/VSCode/code' };
const stopped = { ...running, port: undefined };

describe('ui/agents/clientConfig', () => {
  describe('mcpServerEntry', () => {
    it('Claude Code: Streamable HTTP on 127.0.0.1 with the credential as a bearer header, the client named on every request', () => {
      assert.deepEqual(mcpServerEntry('claude-code', running), {
        type: 'http',
        url: 'http://127.0.0.1:47291/mcp',
        headers: { Authorization: 'Bearer tok_abc-123', 'X-Marginalia-Client': 'Claude Code' },
      });
    });

    it('Cursor: url and headers (Cursor infers the remote transport from url)', () => {
      assert.deepEqual(mcpServerEntry('cursor', running), {
        url: 'http://127.0.0.1:47291/mcp',
        headers: { Authorization: 'Bearer tok_abc-123', 'X-Marginalia-Client': 'Cursor' },
      });
    });

    it('another HTTP client: the typed HTTP entry, the client naming itself', () => {
      assert.deepEqual(mcpServerEntry('http', running), { type: 'http', url: 'http://127.0.0.1:47291/mcp', headers: { Authorization: 'Bearer tok_abc-123' } });
    });

    it('without a running server: stdio under the given runtime as Node, never `node` on the PATH', () => {
      const e = mcpServerEntry('claude-code', stopped);
      assert.deepEqual(e, {
        type: 'stdio',
        command: '/opt/VSCode/code',
        args: ['/ext/bin/marginalia.js', 'mcp', '--project', '/study/study.qda'],
        env: { ELECTRON_RUN_AS_NODE: '1', MARGINALIA_TOKEN: 'tok_abc-123' },
      });
      const c = mcpServerEntry('cursor', stopped);
      assert.equal(c.type, undefined);
      assert.equal(c.command, '/opt/VSCode/code');
      assert.deepEqual(c.env, { ELECTRON_RUN_AS_NODE: '1', MARGINALIA_TOKEN: 'tok_abc-123' });
    });

    it('mcpClientConfig: one "marginalia" server, 2-space JSON ending in a newline', () => {
      const text = mcpClientConfig('claude-code', running);
      assert.ok(text.endsWith('}\n'));
      assert.ok(text.includes('\n  "mcpServers": {\n    "marginalia": {\n      "type": "http",'), text);
      assert.deepEqual(Object.keys(JSON.parse(text).mcpServers), ['marginalia']);
    });
  });

  describe('mergeMcpConfig', () => {
    const entry = { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } };

    it('creates the file from nothing (undefined or blank)', () => {
      for (const existing of [undefined, '', '  \n']) {
        const { text, replaced } = mergeMcpConfig(existing, entry);
        assert.equal(replaced, false);
        assert.deepEqual(JSON.parse(text), { mcpServers: { marginalia: entry } });
      }
    });

    it("keeps other servers, other keys and their order; adds Marginalia's entry last", () => {
      const existing =
        '{\n  "$schema": "s",\n  "mcpServers": {\n    "github": {"command": "gh-mcp", "args": ["--x"]},\n    "db": {"type": "http", "url": "http://db"}\n  },\n  "inputs": [1, 2]\n}';
      const { text, replaced } = mergeMcpConfig(existing, entry);
      assert.equal(replaced, false);
      const out = JSON.parse(text);
      assert.deepEqual(Object.keys(out), ['$schema', 'mcpServers', 'inputs']);
      assert.deepEqual(Object.keys(out.mcpServers), ['github', 'db', 'marginalia']);
      assert.deepEqual(out.mcpServers.github, { command: 'gh-mcp', args: ['--x'] });
      assert.deepEqual(out.mcpServers.db, { type: 'http', url: 'http://db' });
      assert.deepEqual(out.inputs, [1, 2]);
      assert.deepEqual(out.mcpServers.marginalia, entry);
    });

    it('replaces an existing "marginalia" entry in place and says so', () => {
      const existing = JSON.stringify({ mcpServers: { marginalia: { command: 'node', args: ['old'] }, other: { url: 'u' } } });
      const { text, replaced } = mergeMcpConfig(existing, entry);
      assert.equal(replaced, true);
      const out = JSON.parse(text);
      assert.deepEqual(Object.keys(out.mcpServers), ['marginalia', 'other']);
      assert.deepEqual(out.mcpServers.marginalia, entry);
    });

    it('reads a file with a byte-order mark', () => {
      const { text } = mergeMcpConfig('\uFEFF{"mcpServers": {"a": {"url": "u"}}}', entry);
      assert.deepEqual(Object.keys(JSON.parse(text).mcpServers), ['a', 'marginalia']);
    });

    it('refuses a file that is not a JSON object, or whose mcpServers is not an object', () => {
      assert.throws(
        () => mergeMcpConfig('{"mcpServers": {', entry),
        (e: unknown) => e instanceof ConfigFileError && /not valid JSON/.test(e.message),
      );
      assert.throws(
        () => mergeMcpConfig('[1]', entry),
        (e: unknown) => e instanceof ConfigFileError && /not a JSON object/.test(e.message),
      );
      assert.throws(() => mergeMcpConfig('"text"', entry), ConfigFileError);
      assert.throws(
        () => mergeMcpConfig('{"mcpServers": []}', entry),
        (e: unknown) => e instanceof ConfigFileError && /"mcpServers" is not an object/.test(e.message),
      );
      assert.throws(() => mergeMcpConfig('{"mcpServers": null}', entry), ConfigFileError);
    });
  });

  describe('agentNameProblem', () => {
    it('accepts ordinary names, in any script', () => {
      for (const n of ['Claude', 'Claude coding pass 2', 'cursor-1', 'gpt_5.1', 'Agentă Ünïcode', '助手', 'a'.repeat(64)])
        assert.equal(agentNameProblem(n), undefined, n);
    });

    it('refuses empty, padded, too long, odd characters and reserved names', () => {
      assert.match(agentNameProblem('') ?? '', /Name the agent/);
      assert.match(agentNameProblem(' Claude') ?? '', /start or end/);
      assert.match(agentNameProblem('Claude ') ?? '', /start or end/);
      assert.match(agentNameProblem('a'.repeat(65)) ?? '', /At most 64/);
      for (const n of ['-x', 'a/b', 'a:b', 'x\ny', '<script>', 'a"b', 'Claude (2)']) assert.match(agentNameProblem(n) ?? '', /Use letters/, n);
      assert.match(agentNameProblem('Researcher') ?? '', /reserved/);
      assert.match(agentNameProblem('agent') ?? '', /reserved/);
    });

    it('refuses the name of an existing agent, whatever the case', () => {
      assert.match(agentNameProblem('claude', ['Claude', 'Cursor']) ?? '', /exists already/);
      assert.equal(agentNameProblem('Claude 2', ['Claude']), undefined);
    });
  });

  describe('the Connected Agents words', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    const ago = (s: number) => new Date(now - s * 1000).toISOString();

    it('relativeTime', () => {
      assert.equal(relativeTime(ago(10), now), 'just now');
      assert.equal(relativeTime(ago(50), now), '1 min ago');
      assert.equal(relativeTime(ago(125), now), '2 min ago');
      assert.equal(relativeTime(ago(3 * 3600), now), '3 h ago');
      assert.equal(relativeTime(ago(26 * 3600), now), 'yesterday');
      assert.equal(relativeTime(ago(4 * 86_400), now), '4 days ago');
      assert.equal(relativeTime('2026-01-02T03:04:05Z', now), '2026-01-02');
      assert.equal(relativeTime(null, now), 'never');
      assert.equal(relativeTime('garbage', now), 'unknown');
      assert.equal(relativeTime(ago(-30), now), 'just now', 'a clock slightly ahead is "just now"');
    });

    it('agentState: connected when a session is active, idle when only idle ones, else not connected', () => {
      assert.equal(agentState([]), 'not connected');
      assert.equal(agentState([{ status: 'IDLE' }]), 'idle');
      assert.equal(agentState([{ status: 'IDLE' }, { status: 'ACTIVE' }]), 'connected');
    });

    it('agentDescription: state, client, model, last activity, pending requests', () => {
      const s = { session_id: 's1', client_name: 'Claude Code', status: 'ACTIVE', last_activity: ago(120), model: 'claude-opus-4' };
      assert.equal(agentDescription({ last_used_at: ago(3600) }, [s], 2, now), 'connected · Claude Code · claude-opus-4 · active 2 min ago · 2 requests wait');
      assert.equal(
        agentDescription({ last_used_at: ago(3600) }, [{ ...s, status: 'IDLE', model: null }], 1, now),
        'idle · Claude Code · active 2 min ago · 1 request waits',
      );
      assert.equal(agentDescription({ last_used_at: ago(3 * 86_400) }, [], 0, now), 'not connected · active 3 days ago');
      assert.equal(agentDescription({ last_used_at: null }, [], 0, now), 'not connected · never used');
      // the newer of the credential's last use and the sessions' activity
      assert.equal(
        agentDescription({ last_used_at: ago(5) }, [{ ...s, last_activity: ago(600) }], 0, now),
        'connected · Claude Code · claude-opus-4 · active just now',
      );
    });

    it('sessionDescription', () => {
      assert.equal(
        sessionDescription({ session_id: 's', client_name: 'Cursor', status: 'IDLE', last_activity: ago(7200), model: 'gpt-5' }, now),
        'idle · gpt-5 · active 2 h ago',
      );
    });
  });
});

describe('ui/agents/clientConfig gitignoreCovers', () => {
  it('sees the file, its folder, a rooted form or a name pattern', () => {
    assert.equal(gitignoreCovers('.mcp.json\n', '.mcp.json'), true);
    assert.equal(gitignoreCovers('node_modules/\n/.mcp.json\n', '.mcp.json'), true);
    assert.equal(gitignoreCovers('.cursor/\n', '.cursor/mcp.json'), true);
    assert.equal(gitignoreCovers('/.cursor\n', '.cursor/mcp.json'), true);
    assert.equal(gitignoreCovers('.cursor/mcp.json\n', '.cursor/mcp.json'), true);
    assert.equal(gitignoreCovers('mcp.json\n', '.cursor/mcp.json'), true, 'a bare name matches at any depth');
    assert.equal(gitignoreCovers('*.json\n', '.mcp.json'), true);
  });

  it('not comments, negations, other files or a rooted name in another folder', () => {
    assert.equal(gitignoreCovers('', '.mcp.json'), false);
    assert.equal(gitignoreCovers('# .mcp.json\n!.mcp.json\nmcp.json.bak\n*.js\n', '.mcp.json'), false);
    assert.equal(gitignoreCovers('/mcp.json\n', '.cursor/mcp.json'), false);
    assert.equal(gitignoreCovers('.vscode/\n', '.cursor/mcp.json'), false);
  });
});
