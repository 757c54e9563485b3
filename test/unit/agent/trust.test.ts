import * as assert from 'node:assert/strict';
import { parseConfig, defaultConfig, type AgentContextConfig } from '../../../src/agent/config';
import { TrustPolicy, matchesPattern } from '../../../src/agent/trust';
import { ALL_TOOLS } from '../../../src/cli/compose';
import { TOOLS_BY_NAME } from '../../../src/tools/registry';

const tool = (name: string) => {
  const t = TOOLS_BY_NAME.get(name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
};
const check = (p: string, l: Parameters<typeof TrustPolicy.checkOverride>[2]) => TrustPolicy.checkOverride(ALL_TOOLS, p, l);
const policy = (cfg: AgentContextConfig) => new TrustPolicy(() => cfg, ALL_TOOLS);

/**
 * The trust table of the agent-context spec, section 5 ("Default trust by category"), written out by
 * hand: read/query and search Autonomous, report Autonomous, create code Suggest, apply code Notify,
 * rename Suggest, delete Require, merge Require, bulk Require.
 */
describe('trust layer', () => {
  it('gives each category its default level', () => {
    const p = policy(agentConfig(''));
    const expected: Record<string, string> = {
      list_codes: 'auto',
      get_code: 'auto',
      read_source_content: 'auto',
      create_code: 'suggest',
      create_category: 'suggest',
      batch_apply_codes: 'require', // bulk
      delete_segment: 'notify', // removing a coding is the apply-code category
      rename_code: 'suggest',
      rename_category: 'suggest', // rename
      update_category_memo: 'suggest', // a codebook change, like update_code_memo (rename)
      delete_category: 'require', // delete, although no code is deleted
      move_code_to_category: 'notify', // the capability table: move_code Notify
      delete_code: 'require',
      remove_source: 'require',
      merge_codes: 'require',
      add_text_source: 'suggest', // other creations: trust.default_level
    };
    for (const [name, level] of Object.entries(expected)) assert.equal(p.decide(tool(name)).level, level, name);
  });

  it('applies overrides within what each category allows; exact names beat globs', () => {
    const p = policy(agentConfig('agent_context:\n  trust:\n    overrides:\n      create_code: auto\n      "create_*": notify\n      rename_code: notify\n'));
    assert.equal(p.decide(tool('create_code')).level, 'auto');
    assert.equal(p.decide(tool('create_code')).source, 'override:create_code');
    assert.equal(p.decide(tool('create_category')).level, 'notify');
    assert.equal(p.decide(tool('rename_code')).level, 'notify');
  });

  it('refuses a locked level and overrides a category does not allow, naming the key', () => {
    assert.match(check('delete_code', 'auto') ?? '', /locked/);
    assert.match(check('merge_codes', 'notify') ?? '', /locked/);
    assert.equal(check('delete_code', 'suggest'), undefined, 'delete may be lowered to suggest');
    assert.match(check('list_codes', 'require') ?? '', /cannot be overridden/);
    assert.match(check('batch_apply_codes', 'auto') ?? '', /cannot be overridden/);
    assert.throws(
      () => agentConfig('agent_context:\n  trust:\n    overrides:\n      delete_code: auto\n'),
      (e: Error & { code?: string }) => e.code === 'INVALID_CONFIG' && /agent_context\.trust\.overrides\.delete_code/.test(e.message),
    );
  });

  it('refuses an override that names no tool, naming the key and the nearest tool name (a misspelt key must not leave an agent unsupervised)', () => {
    assert.equal(check('aply_code', 'suggest'), 'names no tool (did you mean apply_code?)');
    assert.equal(check('serch_*', 'auto'), 'matches no tool (did you mean search_*?)');
    assert.throws(
      () => agentConfig('agent_context:\n  trust:\n    overrides:\n      aply_code: suggest\n'),
      (e: Error & { code?: string }) =>
        e.code === 'INVALID_CONFIG' && /agent_context\.trust\.overrides\.aply_code: names no tool \(did you mean apply_code\?\)/.test(e.message),
    );
    assert.equal(check('search_*', 'auto'), undefined, 'a glob that matches tools is fine');
  });

  it("raises a tool to the session's own floor, never lowers it", () => {
    const p = policy(agentConfig(''));
    assert.equal(p.decide(tool('list_codes'), 'suggest').level, 'suggest');
    assert.equal(p.decide(tool('delete_code'), 'notify').level, 'require');
  });

  it('matches globs only where the pattern says', () => {
    assert.ok(matchesPattern('search_*', 'search_text'));
    assert.ok(!matchesPattern('search_*', 'list_codes'));
    assert.ok(matchesPattern('*', 'anything'));
    assert.ok(!matchesPattern('create_code', 'create_codes'));
  });
});

describe('.marginalia/config.yaml', () => {
  it('gives the spec defaults for an empty document', () => {
    const c = agentConfig('');
    assert.deepEqual(c, defaultConfig());
    assert.equal(c.sessions.timeout_minutes, 30);
    assert.equal(c.sessions.max_concurrent, 5);
    assert.equal(c.sessions.heartbeat_interval_seconds, 30);
    assert.equal(c.trust.default_level, 'suggest');
    assert.equal(c.rate_limits.requests_per_minute, 60);
    assert.equal(c.rate_limits.mutations_per_minute, 30);
    assert.equal(c.events.buffer_size, 1000);
    assert.equal(c.events.batch_interval_ms, 100);
    assert.deepEqual(c.events.default_subscriptions, ['coding.*', 'source.*', 'analysis.*']);
    assert.equal(c.audit.enabled, true);
    assert.equal(c.audit.include_payload, true);
    assert.equal(c.approvals.max_pending, 10);
    assert.equal(c.approvals.timeout_minutes, 5);
    assert.equal(c.protocols.mcp.port, 3000);
    assert.equal(c.protocols.rest.port, 8080);
    assert.equal(c.protocols.websocket.port, 8081);
  });

  it('reads every key and refuses typos, wrong types and bad YAML with the key path', () => {
    const c = agentConfig(
      'agent_context:\n  sessions:\n    timeout_minutes: 5\n  rate_limits:\n    requests_per_minute: 7\n  audit:\n    include_payload: false\n',
    );
    assert.equal(c.sessions.timeout_minutes, 5);
    assert.equal(c.rate_limits.requests_per_minute, 7);
    assert.equal(c.audit.include_payload, false);
    const bad: [string, RegExp][] = [
      ['agent_context:\n  sessions:\n    timeout_minuts: 5\n', /timeout_minuts/],
      ['agent_context:\n  trust:\n    default_level: lenient\n', /agent_context\.trust\.default_level/],
      ['agent_context:\n  rate_limits:\n    requests_per_minute: -1\n', /requests_per_minute/],
      ['agent_context: [1, 2\n', /YAML/],
      ['other: 1\n', /unknown top-level/],
    ];
    for (const [text, re] of bad) {
      assert.throws(
        () => agentConfig(text),
        (e: Error & { code?: string }) => e.code === 'INVALID_CONFIG' && re.test(e.message),
        text,
      );
    }
  });
});

function agentConfig(text: string): AgentContextConfig {
  return parseConfig(text, (p, l) => TrustPolicy.checkOverride(ALL_TOOLS, p, l));
}
