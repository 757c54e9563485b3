/**
 * The briefing tab's Markdown (src/ui/memos/briefingMarkdown.ts): rendered with three headed sections and read
 * back robustly (any heading level, order, case, trailing colon; list items or plain lines as questions;
 * headings inside code fences ignored), with a clear error naming a missing or repeated heading.
 */
import assert from 'node:assert/strict';
import { BriefingFormatError, parseBriefing, renderBriefing } from '../../../src/ui/memos/briefingMarkdown';

describe('ui/memos/briefingMarkdown', () => {
  const frame = {
    description: 'How community gardens make neighbours.\n\nA second paragraph with *emphasis* and a list:\n\n- plots\n- tools',
    research_questions: ['How do gardens build trust?', 'Who stays, and why? (1) and (2)'],
    methodology: 'Reflexive thematic analysis (Braun & Clarke, 2006).',
  };

  it('renders the three sections under their headings, questions numbered', () => {
    const md = renderBriefing(frame);
    assert.match(md, /^# Project briefing\n/);
    assert.ok(md.includes('## Description\n\nHow community gardens make neighbours.\n\nA second paragraph'));
    assert.ok(
      md.includes(
        '## Research questions\n\n1. How do gardens build trust?\n2. Who stays, and why? (1) and (2)\n\n## Methodology\n\nReflexive thematic analysis (Braun & Clarke, 2006).\n',
      ),
    );
    assert.ok(md.endsWith('2006).\n'));
  });

  it('reads its own rendering back to the same frame (list items in the description stay description)', () => {
    assert.deepEqual(parseBriefing(renderBriefing(frame)), frame);
  });

  it('renders and reads back an empty frame', () => {
    const empty = { description: '', research_questions: [], methodology: '' };
    assert.deepEqual(parseBriefing(renderBriefing(empty)), empty);
  });

  it('accepts any heading level, order and case, a trailing colon, CRLF, bullets and continuation lines', () => {
    const md = [
      'Notes before the first heading are ignored.',
      '### METHODOLOGY:',
      'Grounded theory.',
      '# research questions #',
      '* Why do people',
      '  keep coming back?',
      '+ What do they grow?',
      '3) Who decides?',
      '## Description',
      '',
      'Gardens.',
      '',
    ].join('\r\n');
    assert.deepEqual(parseBriefing(md), {
      description: 'Gardens.',
      research_questions: ['Why do people keep coming back?', 'What do they grow?', 'Who decides?'],
      methodology: 'Grounded theory.',
    });
  });

  it('takes one question per non-empty line when the section has no list', () => {
    const md = '## Description\nD\n## Research questions\nFirst?\n\nSecond?\n## Methodology\nM\n';
    assert.deepEqual(parseBriefing(md).research_questions, ['First?', 'Second?']);
  });

  it('keeps sub-headings and fenced code with "#" lines inside a section', () => {
    const md = '## Description\n### Context\nText\n```\n## Methodology\n```\n## Research questions\n- Q?\n## Methodology\nM';
    const f = parseBriefing(md);
    assert.equal(f.description, '### Context\nText\n```\n## Methodology\n```');
    assert.equal(f.methodology, 'M');
  });

  it('names the missing heading(s) in a BriefingFormatError', () => {
    assert.throws(
      () => parseBriefing('## Description\nD\n## Methodology\nM'),
      (e: unknown) => e instanceof BriefingFormatError && /"## Research questions"/.test(e.message) && !/"## Description"/.test(e.message),
    );
    assert.throws(
      () => parseBriefing('Just some text'),
      (e: unknown) => e instanceof BriefingFormatError && /headings "## Description", "## Research questions", "## Methodology"/.test(e.message),
    );
  });

  it('refuses a heading given twice, naming it', () => {
    assert.throws(
      () => parseBriefing('## Description\nA\n## Description\nB\n## Research questions\n## Methodology\n'),
      (e: unknown) => e instanceof BriefingFormatError && /"## Description" appears twice/.test(e.message),
    );
  });
});
