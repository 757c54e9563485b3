/**
 * The REST adapter's route resolution (src/adapters/rest/restAdapter.ts over src/tools/restRoutes.ts):
 * named routes pick the first tool the registry holds, `generate_report` picks by report_type, a route
 * whose tool is missing is 501 HANDLER_NOT_FOUND, the generic route checks the category; and the segment
 * filter syntax.
 */
import assert from 'node:assert/strict';
import { parseSegmentFilter, resolveCommand } from '../../../src/adapters/rest/restAdapter';
import type { ToolListing } from '../../../src/agent/pipeline';
import { isToolError } from '../../../src/core/errors';
import { COMMAND_CATEGORY_OF_GROUP, COMMAND_ROUTES } from '../../../src/tools/restRoutes';
import { TOOLS } from '../../../src/tools/registry';

const listing = (...names: [string, ToolListing['group']][]): ToolListing[] =>
  names.map(([name, group]) => ({ name, group, title: name, description: '', effect: 'read', trust_category: 'read', inputSchema: {} }));

describe('adapters/rest routes', () => {
  it('source/import uses import_source when it exists, else import_file_source', () => {
    const both = resolveCommand('source', 'import', { file_path: '/x.txt' }, listing(['import_source', 'source'], ['import_file_source', 'source']));
    assert.deepEqual(both, { tool: 'import_source', args: { file_path: '/x.txt' } });
    const fallback = resolveCommand('source', 'import', { file_path: '/x.txt' }, listing(['import_file_source', 'source']));
    assert.deepEqual(fallback, { tool: 'import_file_source', args: { file_path: '/x.txt' } });
  });

  it('a route whose tool does not exist is 501 HANDLER_NOT_FOUND naming the tool', () => {
    const r = resolveCommand('coding', 'apply_code', {}, listing(['create_code', 'core']));
    assert.ok('envelope' in r);
    assert.equal(r.status, 501);
    assert.equal(!r.envelope.success && r.envelope.error_code, 'HANDLER_NOT_FOUND');
    assert.match(!r.envelope.success ? r.envelope.error : '', /apply_code/);
  });

  it('generate_report picks its tool by report_type and passes the rest on', () => {
    const tools = listing(['generate_frequency_report', 'analysis'], ['generate_cooccurrence_report', 'analysis']);
    assert.deepEqual(resolveCommand('analysis', 'generate_report', { report_type: 'cooccurrence', filters: { a: 1 } }, tools), {
      tool: 'generate_cooccurrence_report',
      args: { filters: { a: 1 } },
    });
    const missing = resolveCommand('analysis', 'generate_report', { report_type: 'coder_comparison' }, tools);
    assert.ok('envelope' in missing && missing.status === 501);
    const bad = resolveCommand('analysis', 'generate_report', { report_type: 'pie' }, tools);
    assert.ok('envelope' in bad && bad.status === 400);
    const none = resolveCommand('analysis', 'generate_report', {}, tools);
    assert.ok('envelope' in none && none.status === 400);
  });

  it('the generic route runs any tool under its own category only', () => {
    const tools = listing(['rename_code', 'code'], ['list_sources', 'source']);
    assert.deepEqual(resolveCommand('coding', 'rename_code', { code_id: 1 }, tools), { tool: 'rename_code', args: { code_id: 1 } });
    const wrong = resolveCommand('source', 'rename_code', {}, tools);
    assert.ok('envelope' in wrong && wrong.status === 404);
    const unknown = resolveCommand('coding', 'constructor', {}, tools);
    assert.ok('envelope' in unknown && unknown.status === 404, 'no prototype members');
  });

  it('every registry group has a command category, and every named route names tools by their registry names', () => {
    for (const t of TOOLS) assert.ok(COMMAND_CATEGORY_OF_GROUP[t.group], t.group);
    const names = new Set(TOOLS.map((t) => t.name));
    // the routes that exist today must resolve to tools of their own category
    for (const [key, route] of Object.entries(COMMAND_ROUTES)) {
      const tool = route.tools.find((n) => names.has(n));
      if (tool) assert.equal(COMMAND_CATEGORY_OF_GROUP[TOOLS.find((t) => t.name === tool)!.group], key.split('/')[0], key);
    }
  });

  it('parses the segment filter: key:value pairs, separate parameters, both', () => {
    assert.deepEqual(parseSegmentFilter({ filter: 'code_id:3,source_id=2' }), { code_id: 3, source_id: 2, case_id: undefined });
    assert.deepEqual(parseSegmentFilter({ case_id: '4' }), { code_id: undefined, source_id: undefined, case_id: 4 });
    assert.deepEqual(parseSegmentFilter({ filter: 'code_id:3', code_id: '3' }), { code_id: 3, source_id: undefined, case_id: undefined });
    for (const bad of [{ filter: 'code:3' }, { filter: 'code_id' }, { filter: 'code_id:3', code_id: '4' }, { code_id: ['1', '2'] }, { filter: 'code_id:' }]) {
      assert.throws(
        () => parseSegmentFilter(bad),
        (e: unknown) => isToolError(e) && e.code === 'INVALID_ARGUMENTS',
        JSON.stringify(bad),
      );
    }
  });
});
