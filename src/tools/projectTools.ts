import { defineTool } from './defineTool';
import { args, text } from './schemas';

export const getProjectContext = defineTool({
  name: 'get_project_context',
  group: 'project',
  title: 'Get Project Context',
  description:
    'The open project: its name and path, its sources (id, name, type), cases, counts of codes, categories, folders and segments, ' +
    'and the screen the researcher is on. Call this first to orient yourself. Errors: NO_PROJECT.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const counts = repo.counts();
    const sources = repo
      .listSources()
      .map((s) => ({ id: s.source_id, source_id: s.source_id, name: s.name, type: s.type, coded: s.segment_count + s.av_segment_count > 0 }));
    const cases = repo.listCases().map((c) => ({ id: c.case_id, case_id: c.case_id, name: c.name }));
    return {
      project_open: true,
      project_name: ctx.project.name,
      project_path: ctx.project.path,
      source_count: counts.sources,
      sources,
      case_count: cases.length,
      cases,
      code_count: counts.codes,
      category_count: counts.categories,
      folder_count: counts.folders,
      segment_count: counts.segments,
      av_segment_count: counts.av_segments,
      current_screen: ctx.host.currentScreen(),
      mode: ctx.host.mode,
    };
  },
});

const OPEN_GUIDANCE =
  'Marginalia does not open projects on request. Ask the researcher to open it in VS Code with the command ' +
  '"Marginalia: Open Project" (marginalia.project.open), or to start the headless server with `marginalia serve --project PATH`. ' +
  'Opening it there initialises the project store, its journal and its lock properly.';

export const openProject = defineTool({
  name: 'open_project',
  group: 'project',
  title: 'Open Project (guidance)',
  description:
    'Does not open anything: returns guidance telling the researcher how to open a project (VS Code command "Marginalia: Open Project", ' +
    'or `marginalia serve --project PATH`). Works with or without an open project.',
  input: args({ path: text(4096, 1).describe('path of the .qda project the agent wants opened') }),
  effect: 'read',
  trust: 'guidance',
  needsProject: false,
  run: (_ctx, input) => ({
    opened: false,
    requested_path: input.path,
    command: 'marginalia.project.open',
    command_title: 'Marginalia: Open Project',
    guidance: OPEN_GUIDANCE,
  }),
});

export const closeProject = defineTool({
  name: 'close_project',
  group: 'project',
  title: 'Close Project (guidance)',
  description:
    'Does not close anything: returns guidance telling the researcher how to close the project (VS Code command "Marginalia: Close Project", ' +
    'or stopping `marginalia serve` with Ctrl+C, which checkpoints first). Works with or without an open project.',
  input: args({}),
  effect: 'read',
  trust: 'guidance',
  needsProject: false,
  run: () => ({
    closed: false,
    command: 'marginalia.project.close',
    command_title: 'Marginalia: Close Project',
    guidance:
      'Marginalia does not close projects on request. Ask the researcher to run "Marginalia: Close Project" (marginalia.project.close) in VS Code, ' +
      'or to stop the headless server with Ctrl+C (it checkpoints the project, then exits).',
  }),
});
