/**
 * src/tools/registry.ts against the HTTP tool interface (shared/spec/http-tool-interface.md, section 4):
 * the 28 tools of the core, project lifecycle, source management, folder management and code management
 * tables, the 6 of the AV coding table and the 4 of the version control table, with the spec's required and optional parameters and defaults, plus only the Marginalia extras
 * declared below. The expected lists are copied by hand from the spec's tables.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toJsonSchema } from '../../../src/agent/pipeline';
import { TOOLS, TOOLS_BY_NAME } from '../../../src/tools/registry';
import { openFixture, type Fixture } from '../domain/projectFixture';

interface SpecTool {
  group: string;
  required: string[];
  optional: string[];
  /** parameters the spec marks with [] */
  arrays?: string[];
}

/** The spec's tables, by hand. */
const SPEC: Record<string, SpecTool> = {
  // Core
  list_codes: { group: 'core', required: [], optional: [] },
  get_code: { group: 'core', required: ['code_id'], optional: [] },
  // the spec requires color; issue 13 (item 2) relaxes it: without one the code gets a palette colour no other
  // code uses. Every call the spec allows is still accepted.
  create_code: { group: 'core', required: ['name'], optional: ['color'] },
  list_segments_for_source: { group: 'core', required: ['source_id'], optional: [] },
  delete_segment: { group: 'core', required: ['segment_id'], optional: [] },
  batch_apply_codes: { group: 'core', required: ['operations'], optional: [], arrays: ['operations'] },
  // Project lifecycle
  get_project_context: { group: 'project', required: [], optional: [] },
  open_project: { group: 'project', required: ['path'], optional: [] },
  close_project: { group: 'project', required: [], optional: [] },
  // Source management
  list_sources: { group: 'source', required: [], optional: ['source_type'] },
  read_source_content: { group: 'source', required: ['source_id'], optional: ['start_pos', 'end_pos', 'max_length'] },
  navigate_to_segment: { group: 'source', required: ['source_id', 'start_pos', 'end_pos'], optional: ['highlight'] },
  suggest_source_metadata: { group: 'source', required: ['source_id'], optional: ['language', 'topics', 'organization_suggestion'], arrays: ['topics'] },
  add_text_source: { group: 'source', required: ['name', 'content'], optional: ['memo', 'origin'] },
  remove_source: { group: 'source', required: ['source_id'], optional: ['confirm'] },
  import_file_source: { group: 'source', required: ['file_path'], optional: ['name', 'memo', 'origin', 'dry_run'] },
  // Folder management
  list_folders: { group: 'folder', required: [], optional: [] },
  create_folder: { group: 'folder', required: ['name'], optional: ['parent_id'] },
  rename_folder: { group: 'folder', required: ['folder_id', 'new_name'], optional: [] },
  delete_folder: { group: 'folder', required: ['folder_id'], optional: [] },
  move_source_to_folder: { group: 'folder', required: ['source_id'], optional: ['folder_id'] },
  // Code management
  rename_code: { group: 'code', required: ['code_id', 'new_name'], optional: [] },
  // the spec's table lists memo as optional ("null clears"); issue #15 makes it required, so that a call
  // without memo is an error and not a silent erasure (null still clears)
  update_code_memo: { group: 'code', required: ['code_id', 'memo'], optional: [] },
  create_category: { group: 'code', required: ['name'], optional: ['parent_id', 'memo'] },
  move_code_to_category: { group: 'code', required: ['code_id'], optional: ['category_id'] },
  merge_codes: { group: 'code', required: ['source_code_id', 'target_code_id'], optional: [] },
  delete_code: { group: 'code', required: ['code_id'], optional: ['delete_segments'] },
  list_categories: { group: 'code', required: [], optional: [] },
  // AI code suggestions
  analyze_content_for_codes: { group: 'ai_code_suggestions', required: ['source_id'], optional: [] },
  suggest_new_code: { group: 'ai_code_suggestions', required: ['name', 'rationale'], optional: [] },
  list_pending_suggestions: { group: 'ai_code_suggestions', required: [], optional: [] },
  approve_suggestion: { group: 'ai_code_suggestions', required: ['suggestion_id'], optional: [] },
  detect_duplicate_codes: { group: 'ai_code_suggestions', required: [], optional: [] },
  suggest_merge_codes: { group: 'ai_code_suggestions', required: ['source_code_id', 'target_code_id', 'rationale'], optional: [] },
  approve_merge: { group: 'ai_code_suggestions', required: ['merge_suggestion_id'], optional: [] },
  // AI text coding
  suggest_code_application: { group: 'ai_text_coding', required: ['source_id', 'code_id', 'start_pos', 'end_pos'], optional: [] },
  list_pending_coding_suggestions: { group: 'ai_text_coding', required: [], optional: ['source_id'] },
  approve_coding_suggestion: { group: 'ai_text_coding', required: ['suggestion_id'], optional: [] },
  reject_coding_suggestion: { group: 'ai_text_coding', required: ['suggestion_id'], optional: [] },
  analyze_uncoded_text: { group: 'ai_text_coding', required: ['source_id'], optional: [] },
  suggest_codes_for_range: { group: 'ai_text_coding', required: ['source_id', 'start_pos', 'end_pos'], optional: [] },
  auto_suggest_codes: { group: 'ai_text_coding', required: ['source_id'], optional: [] },
  get_suggestion_batch_status: { group: 'ai_text_coding', required: ['batch_id'], optional: [] },
  respond_to_code_suggestion: { group: 'ai_text_coding', required: ['suggestion_batch_id', 'response'], optional: [] },
  approve_batch_coding: { group: 'ai_text_coding', required: ['batch_id'], optional: [] },
  // Batch operations
  find_similar_content: { group: 'batch', required: ['search_text'], optional: [] },
  suggest_batch_coding: { group: 'batch', required: ['code_id', 'segments', 'rationale'], optional: [], arrays: ['segments'] },
  // AV coding
  apply_av_code: { group: 'av', required: ['code_id', 'source_id', 'start_ms', 'end_ms'], optional: ['transcript', 'memo'] },
  list_av_segments: { group: 'av', required: ['source_id'], optional: [] },
  remove_av_segment: { group: 'av', required: ['segment_id'], optional: [] },
  transcribe_media: { group: 'av', required: ['source_id'], optional: [] },
  detect_speakers: { group: 'av', required: ['source_id'], optional: [] },
  suggest_codes_for_transcript: { group: 'av', required: ['source_id'], optional: [] },
  // Version control
  initialize_version_control: { group: 'version_control', required: [], optional: [] },
  list_snapshots: { group: 'version_control', required: [], optional: ['limit'] },
  view_diff: { group: 'version_control', required: ['from_ref', 'to_ref'], optional: [] },
  restore_snapshot: { group: 'version_control', required: ['ref'], optional: [] },
  // Exchange
  suggest_export_format: { group: 'exchange', required: ['use_case'], optional: [] },
  export_data: { group: 'exchange', required: ['format', 'output_path'], optional: ['include_memos'] },
  import_data: { group: 'exchange', required: ['format', 'source_path'], optional: ['name_column'] },
  import_analytics: { group: 'exchange', required: ['source_path'], optional: [] },
};

/**
 * Marginalia's tools beyond the spec's tables, declared here by hand so that adding a tool to the
 * registry is a conscious change to this list (the spec's 28 stay exactly as they are).
 */
const MARGINALIA_EXTRAS: Record<string, SpecTool> = {
  update_segment_memo: { group: 'core', required: ['segment_id', 'memo'], optional: [] },
  // backs GET /state/segments and qda://segments?code_id=X|source_id=X|case_id=X (agent-context spec, sections 2 and 4)
  list_segments: { group: 'core', required: [], optional: ['code_id', 'source_id', 'case_id', 'limit', 'offset'] },
  // the Retrieval view's query for agents too: codes combined with or / and / overlap, filtered (issue 13, item 7)
  retrieve_segments: { group: 'core', required: ['code_ids'], optional: ['combine', 'filters', 'limit', 'offset'], arrays: ['code_ids'] },
  set_code_color: { group: 'code', required: ['code_id', 'color'], optional: [] },
  // category management beyond create_category (issue 13, item 4)
  rename_category: { group: 'code', required: ['category_id', 'new_name'], optional: [] },
  update_category_memo: { group: 'code', required: ['category_id', 'memo'], optional: [] },
  delete_category: { group: 'code', required: ['category_id'], optional: ['move_codes_to'] },
  // case management: the HTTP spec's case table (section 4) ...
  list_cases: { group: 'case', required: [], optional: [] },
  get_case: { group: 'case', required: ['case_id'], optional: [] },
  suggest_case_groupings: { group: 'case', required: [], optional: ['attribute_names', 'min_group_size'], arrays: ['attribute_names'] },
  compare_cases: { group: 'case', required: ['case_ids'], optional: ['code_ids'], arrays: ['case_ids', 'code_ids'] },
  // ... and the agent-context capability table's case writers (start/end of add_segment_to_case are aliases of start_pos/end_pos)
  create_case: { group: 'case', required: ['name'], optional: ['memo'] },
  delete_case: { group: 'case', required: ['case_id'], optional: [] },
  add_source_to_case: { group: 'case', required: ['case_id', 'source_id'], optional: [] },
  add_segment_to_case: { group: 'case', required: ['case_id', 'source_id'], optional: ['start_pos', 'end_pos', 'start', 'end'] },
  set_case_attribute: { group: 'case', required: ['case_id', 'attribute_name', 'value'], optional: ['type'] },
  // ... and Marginalia's case management for the workbench (issue 13 item 5; src/tools/caseManagementTools.ts)
  rename_case: { group: 'case', required: ['case_id', 'new_name'], optional: [] },
  remove_source_from_case: { group: 'case', required: ['case_id', 'source_id'], optional: [] },
  remove_case_attribute: { group: 'case', required: ['case_id', 'attribute_name'], optional: [] },
  list_case_attributes: { group: 'case', required: [], optional: [] },
  rename_case_attribute: { group: 'case', required: ['attribute_name', 'new_name'], optional: [] },
  // search: the agent-context capability table (section 4), with paging and k limits
  search_text: { group: 'search', required: ['query'], optional: ['filters', 'limit', 'offset'] },
  search_semantic: { group: 'search', required: ['query'], optional: ['k', 'filters'] },
  search_codes: { group: 'search', required: ['query'], optional: ['limit'] },
  find_similar_segments: { group: 'search', required: ['segment_id'], optional: ['k'] },
  // approvals: what became of a call held for the researcher (agent-context spec, section 5; MCP pending_approval answers)
  get_approval_status: { group: 'project', required: ['request_id'], optional: [] },
  list_pending_approvals: { group: 'project', required: [], optional: ['only_mine'] },
  list_sessions: { group: 'project', required: [], optional: ['role'] },
  get_session: { group: 'project', required: ['session_id'], optional: [] },
  end_session: { group: 'project', required: ['session_id'], optional: [] },
  // the agent-context capability table's remaining capabilities (src/tools/capabilityTools.ts): apply_code's start_position and
  // end_position are required in effect but not in the schema, since start_pos/end_pos are accepted as aliases
  apply_code: { group: 'core', required: ['code_id', 'source_id'], optional: ['start_position', 'end_position', 'start_pos', 'end_pos', 'memo', 'importance'] },
  remove_code: { group: 'core', required: ['segment_id'], optional: [] },
  move_code: { group: 'code', required: ['code_id', 'category_id'], optional: [] },
  import_source: { group: 'source', required: ['file_path'], optional: ['name'] },
  import_text: { group: 'source', required: ['content', 'name'], optional: [] },
  rename_source: { group: 'source', required: ['source_id', 'new_name'], optional: [] },
  delete_source: { group: 'source', required: ['source_id'], optional: [] },
  update_memo: { group: 'source', required: ['source_id', 'memo'], optional: [] },
  // document attributes (issue 13 item 5; src/tools/sourceAttributeTools.ts)
  set_source_attribute: { group: 'source', required: ['source_id', 'attribute_name', 'value'], optional: ['type'] },
  // erasure when a participant withdraws consent (issue 15, item 9); researcher only
  erase_source: { group: 'source', required: ['source_id', 'confirm'], optional: [] },
  // sources closed to agents (issue 14 item 11; src/tools/agentAccessTools.ts); set_agent_access is researcher only
  set_agent_access: { group: 'source', required: ['access'], optional: ['source_id', 'folder_id', 'case_id', 'agents'], arrays: ['agents'] },
  get_agent_access: { group: 'source', required: [], optional: [] },
  // blind coding (issue 16 item 5; src/tools/teamTools.ts); setting or ending it is researcher only
  set_blind_coding: { group: 'project', required: ['enabled'], optional: ['lead'] },
  end_blind_coding: { group: 'project', required: [], optional: [] },
  // conflicts of a merge of two histories (issue 16 item 4; src/tools/mergeConflictTools.ts)
  list_merge_conflicts: { group: 'version_control', required: [], optional: ['status'] },
  resolve_merge_conflict: { group: 'version_control', required: ['conflict_id', 'choice'], optional: ['value'] },
  // the history's git remote (issue 16 item 2; src/tools/remoteTools.ts)
  configure_remote: { group: 'version_control', required: ['url'], optional: ['name'] },
  sync_project: { group: 'version_control', required: [], optional: [] },
  get_remote_status: { group: 'version_control', required: [], optional: ['fetch'] },
  get_team_settings: { group: 'project', required: [], optional: [] },
  // memos as documents (issue 13 item 6; src/tools/memoTools.ts): a case's memo, and the briefing's research frame (researcher only)
  update_case_memo: { group: 'case', required: ['case_id', 'memo'], optional: [] },
  update_project_briefing: { group: 'project', required: [], optional: ['description', 'research_questions', 'methodology'], arrays: ['research_questions'] },
  // undo and redo of the researcher's own actions (issue 13 item 1; src/tools/undoTools.ts); researcher only
  undo: { group: 'core', required: [], optional: [] },
  redo: { group: 'core', required: [], optional: [] },
  // undo of an agent's action (issue 14 item 8): researcher only, on every surface
  undo_agent_action: { group: 'core', required: ['correlation_id'], optional: [] },
  // ... and its reports (src/tools/reportTools.ts), with get_report / list_reports behind qda://reports
  generate_frequency_report: { group: 'analysis', required: [], optional: ['filters'] },
  generate_cooccurrence_report: { group: 'analysis', required: [], optional: ['filters'] },
  generate_coder_comparison: { group: 'analysis', required: ['coder_ids'], optional: ['unit', 'bootstrap', 'filters'], arrays: ['coder_ids'] },
  get_report: { group: 'analysis', required: ['report_id'], optional: [] },
  list_reports: { group: 'analysis', required: [], optional: ['report_type', 'status', 'limit', 'offset'] },
  export_report: { group: 'analysis', required: ['report_id', 'format'], optional: ['output_path', 'overwrite'] },
};
const ALL: Record<string, SpecTool> = { ...SPEC, ...MARGINALIA_EXTRAS };

/** Tools that only read (or only return guidance): they must never write. By hand from the spec's notes. */
const READ_ONLY = new Set([
  'get_approval_status',
  // what the researcher closed to agents (src/tools/agentAccessTools.ts)
  'get_agent_access',
  // the team setting (src/tools/teamTools.ts)
  'get_team_settings',
  // merge conflicts (src/tools/mergeConflictTools.ts)
  'list_merge_conflicts',
  // how the history stands against its remote (src/tools/remoteTools.ts)
  'get_remote_status',
  'list_pending_approvals',
  // who is connected (src/tools/sessionTools.ts; end_session changes no project data but is not read-only)
  'list_sessions',
  'get_session',
  // reports: reading them back (generating one stores it; export_report writes a file)
  'get_report',
  'list_reports',
  'list_codes',
  'get_code',
  'list_segments_for_source',
  'list_segments',
  'retrieve_segments',
  'get_project_context',
  'open_project',
  'close_project',
  'list_sources',
  'read_source_content',
  'navigate_to_segment',
  'list_folders',
  'list_categories',
  'list_cases',
  'get_case',
  'suggest_case_groupings',
  'compare_cases',
  'list_case_attributes',
  'list_av_segments',
  'transcribe_media',
  'detect_speakers',
  'suggest_codes_for_transcript',
  'list_snapshots',
  'view_diff',
  // exchange: the suggestion only answers; export_data writes a file, never the project
  'suggest_export_format',
  'export_data',
  // suggestions: the analyses, lists and status only read; every suggest_*/approve_*/reject/respond writes
  'analyze_content_for_codes',
  'list_pending_suggestions',
  'detect_duplicate_codes',
  'list_pending_coding_suggestions',
  'analyze_uncoded_text',
  'get_suggestion_batch_status',
  'find_similar_content',
  // search (the similarity searches write only their embedding cache, never the project's data)
  'search_text',
  'search_semantic',
  'search_codes',
  'find_similar_segments',
]);

describe('tools/registry', () => {
  it('holds every one of the 28 tools of the spec, each once', () => {
    assert.equal(
      Object.keys(SPEC).length,
      28 +
        6 /* AV coding */ +
        4 /* version control */ +
        19 /* AI code suggestions, AI text coding, batch operations */ +
        4 /* exchange: suggest_export_format, export_data, import_data, import_analytics */,
    );
    const names = TOOLS.map((t) => t.name);
    assert.equal(new Set(names).size, names.length, 'no duplicates');
    const missing = Object.keys(SPEC).filter((n) => !names.includes(n));
    assert.deepEqual(missing, [], 'spec tools missing from the registry');
  });

  it('holds nothing beyond the spec but the declared Marginalia extras', () => {
    const names = TOOLS.map((t) => t.name);
    assert.deepEqual([...names].sort(), Object.keys(ALL).sort());
    for (const extra of Object.keys(MARGINALIA_EXTRAS)) assert.ok(!(extra in SPEC), extra);
  });

  it('TOOLS_BY_NAME indexes the same tools', () => {
    assert.equal(TOOLS_BY_NAME.size, TOOLS.length);
    for (const t of TOOLS) assert.equal(TOOLS_BY_NAME.get(t.name), t);
  });

  it("puts each tool in its spec table's group", () => {
    for (const t of TOOLS) assert.equal(t.group, ALL[t.name]!.group, t.name);
  });

  it("requires exactly the spec's required parameters and accepts its optional ones", () => {
    for (const t of TOOLS) {
      const spec = ALL[t.name]!;
      const schema = toJsonSchema(t.input) as { type: string; properties?: Record<string, { type?: string }>; required?: string[] };
      assert.equal(schema.type, 'object', t.name);
      assert.deepEqual([...(schema.required ?? [])].sort(), [...spec.required].sort(), `${t.name} required`);
      const props = Object.keys(schema.properties ?? {});
      for (const p of [...spec.required, ...spec.optional]) assert.ok(props.includes(p), `${t.name} lacks parameter ${p}`);
      for (const a of spec.arrays ?? []) assert.equal(schema.properties![a]!.type, 'array', `${t.name}.${a} is an array`);
    }
  });

  it('list_sources filters by exactly the five source types', () => {
    const schema = toJsonSchema(TOOLS_BY_NAME.get('list_sources')!.input) as { properties: { source_type: { enum: string[] } } };
    assert.deepEqual([...schema.properties.source_type.enum].sort(), ['audio', 'image', 'pdf', 'text', 'video']);
  });

  it('marks reading and guidance tools as read, every other tool as writing', () => {
    for (const t of TOOLS) {
      if (READ_ONLY.has(t.name)) assert.equal(t.effect, 'read', t.name);
      else assert.notEqual(t.effect, 'read', t.name);
    }
  });

  it('only open_project, close_project and the session tools (who is connected) work without a project', () => {
    const without = TOOLS.filter((t) => t.needsProject === false).map((t) => t.name);
    assert.deepEqual(without.sort(), ['close_project', 'end_session', 'get_session', 'list_sessions', 'open_project']);
  });

  describe("the spec's defaults", () => {
    let fx: Fixture;
    beforeEach(async () => {
      fx = await openFixture();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('read_source_content: start_pos 0 and max_length 50000', async () => {
      const s = await fx.ok('add_text_source', { name: 'Long', content: 'x'.repeat(50_001) });
      const p = await fx.ok('read_source_content', { source_id: s.source_id });
      assert.equal(p.start_pos, 0);
      assert.equal(p.end_pos, 50_000);
      assert.equal([...p.content].length, 50_000);
      assert.equal(p.has_more, true);
      const rest = await fx.ok('read_source_content', { source_id: s.source_id, start_pos: p.end_pos });
      assert.equal(rest.content, 'x');
      assert.equal(rest.has_more, false);
    });

    it('navigate_to_segment: highlight true', async () => {
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      const r = await fx.ok('navigate_to_segment', { source_id: s.source_id, start_pos: 6, end_pos: 11 });
      assert.equal(r.navigated_to.highlight, true);
      assert.equal(r.text, 'world');
      assert.equal(r.navigated, false, 'headless: nothing is shown');
    });

    it('remove_source: confirm false; delete_code: delete_segments false; import_file_source: dry_run false', async () => {
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello' });
      assert.equal((await fx.ok('remove_source', { source_id: s.source_id })).preview, true);
      assert.equal((await fx.ok('list_sources')).count, 1);

      const c = await fx.ok('create_code', { name: 'C', color: '#000000' });
      await fx.ok('batch_apply_codes', { operations: [{ code_id: c.code_id, source_id: s.source_id, start_position: 0, end_position: 5 }] });
      await fx.fails('delete_code', { code_id: c.code_id }, 'CODE_HAS_SEGMENTS');

      const file = path.join(fx.dir, 'n.txt');
      fs.writeFileSync(file, 'text');
      const imported = await fx.ok('import_file_source', { file_path: file });
      assert.equal(imported.dry_run, false);
      assert.equal((await fx.ok('list_sources')).count, 2);
    });
  });
});
