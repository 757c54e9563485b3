/**
 * The transcript grammar (syntaxes/transcript.tmLanguage.json): its regexes against the speaker detection
 * examples of test/unit/domain/speakers.test.ts (the spec's detect_speakers rules: UPPERCASE + colon,
 * Title Case + colon, a label in square brackets, after bracketed timestamps) and bracketed timestamps.
 * The expected speakers and timestamps are written by hand below.
 *
 * Twice: with JavaScript RegExp (u flag), the first rule of the grammar that matches at the line start; and
 * with VS Code's own tokenizer (vscode-textmate on Oniguruma, taken from the VS Code server of the
 * integration rig in .vscode-rig/ when it is installed), so the regexes are checked in the engine VS Code
 * runs them in.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const GRAMMAR_FILE = path.join(ROOT, 'syntaxes', 'transcript.tmLanguage.json');
const SPEAKER = 'entity.name.tag.speaker.marginalia-transcript';
const TIMESTAMP = 'constant.numeric.timestamp.marginalia-transcript';
const ANNOTATION = 'comment.block.annotation.marginalia-transcript';

interface Rule {
  match: string;
  captures?: Record<string, { name?: string }>;
}
const grammar = JSON.parse(fs.readFileSync(GRAMMAR_FILE, 'utf8')) as { scopeName: string; patterns: { include: string }[]; repository: Record<string, Rule> };

/** Each line with the speaker label a reader sees in it (null: none). */
const SPEAKER_LINES: [string, string | null][] = [
  // UPPERCASE + colon
  ['LCC: Lift-off', 'LCC'],
  ['BELL 7: Loud and clear.', 'BELL 7'],
  ['P: Roger', 'P'],
  // Title Case + colon
  ['Researcher 1: Hello', 'Researcher 1'],
  ['Sara Mannheimer: Hi', 'Sara Mannheimer'],
  ['Ludwig van Beethoven: Da-da-da-dum', 'Ludwig van Beethoven'],
  ['José Müller-Lüdenscheidt: Guten Tag', 'José Müller-Lüdenscheidt'],
  ['Interviewer: How did you first get involved with the community garden?', 'Interviewer'],
  ['Participant A: My neighbour Zoë asked me to help.', 'Participant A'],
  // a label in square brackets, followed by text
  ['[id1] hello', 'id1'],
  ['[Interviewer]: How?', 'Interviewer'],
  ['[inaudible] yes', null],
  ['[Name Redacted] said so', null],
  ['[laughs] okay', null],
  ['[Redacted -- brief discussion of the details of the workplace]', null],
  // after bracketed timestamps
  ['[00:12:34] INTERVIEWER: How did it start?', 'INTERVIEWER'],
  ['[12:34] Maria: With seeds.', 'Maria'],
  ['[-00:00:00:03]', null],
  ['[1:02:03.500] [id2] late', 'id2'],
  // Otter.ai turn headers
  ['Sara Mannheimer  00:13', 'Sara Mannheimer'],
  ['BSR01  1:02:03', 'BSR01'],
  ['Speaker 2\t04:05', 'Speaker 2'],
  ['Sara Mannheimer 00:20', null],
  // never labels: continuation lines, metadata, sentences, lower case
  ['single space: not Otter', null],
  ['     20. Voltages: main 24, 25.', null],
  ['     CC: an indented line is a continuation', null],
  ['_page : 148', null],
  ['# Canaveral CC', null],
  ['dizziness: none', null],
  ['The Thing We Talked About Yesterday Afternoon: was fine', null],
  ['Note to self: call back', null],
  ['A VERY LONG SHOUTED SENTENCE THAT GOES ON: and on', null],
  ['and then she said: no', null],
];

/** Each line with the timestamps in it (the digits, without brackets). */
const TIMESTAMP_LINES: [string, string[]][] = [
  ['[00:12:34] INTERVIEWER: How did it start?', ['00:12:34']],
  ['[1:02:03.500] [id2] late', ['1:02:03.500']],
  ['[-00:00:00:03]', ['-00:00:00:03']],
  ['She paused (00:12) and went on [01:15] later.', ['00:12', '01:15']],
  ['Sara Mannheimer  00:13', ['00:13']],
  ['00:00:01.000 --> 00:00:04,500', ['00:00:01.000', '00:00:04,500']],
  ['Mismatched [12:34) and (12:34] brackets', []],
  ['Version (1.2), ratio 3:4, [a:b] and 12:34 without brackets', []],
];

/** The speaker label text of `line` by the grammar's label rules in JavaScript: the first rule matching at the line start. */
function jsSpeaker(line: string): string | null {
  for (const { include } of grammar.patterns) {
    const rule = grammar.repository[include.slice(1)]!;
    const group = Object.entries(rule.captures ?? {}).find(([, c]) => c.name === SPEAKER)?.[0];
    if (!rule.match.startsWith('^') || group === undefined) continue;
    const m = new RegExp(rule.match, 'u').exec(line);
    if (m) return m[Number(group)] ?? null;
  }
  return null;
}

/** The timestamps of `line` by the grammar's timestamp, Otter and cue timing rules in JavaScript. */
function jsTimestamps(line: string): string[] {
  const out: { at: number; text: string }[] = [];
  for (const name of ['timestamp', 'otter-header', 'cue-timing']) {
    const rule = grammar.repository[name]!;
    const groups = Object.entries(rule.captures ?? {})
      .filter(([, c]) => c.name === TIMESTAMP)
      .map(([g]) => Number(g));
    const re = new RegExp(rule.match, 'gu');
    for (let m = re.exec(line); m; m = re.exec(line)) {
      for (const g of groups) if (m[g] !== undefined) out.push({ at: m.index + m[0].indexOf(m[g]), text: m[g] });
    }
  }
  return out.sort((a, b) => a.at - b.at).map((t) => t.text);
}

describe('syntaxes/transcript.tmLanguage.json', () => {
  it('is contributed for the transcript language and every rule compiles as a JavaScript RegExp (u flag)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.contributes.grammars, [
      { language: 'marginalia-transcript', scopeName: 'text.marginalia-transcript', path: './syntaxes/transcript.tmLanguage.json' },
    ]);
    assert.equal(grammar.scopeName, 'text.marginalia-transcript');
    for (const { include } of grammar.patterns) assert.ok(grammar.repository[include.slice(1)], `${include} is defined`);
    for (const [name, rule] of Object.entries(grammar.repository)) assert.doesNotThrow(() => new RegExp(rule.match, 'u'), name);
  });

  it('is packed into the .vsix: .vscodeignore, which excludes everything first, lets syntaxes/ in', () => {
    // (`npx vsce ls` lists syntaxes/transcript.tmLanguage.json; run here it takes 13 s, so only the rule is checked)
    const rules = fs
      .readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(rules[0], '**');
    assert.ok(rules.includes('!syntaxes/**'), rules.join(' '));
  });

  it('marks the speaker labels of the detect_speakers examples (JavaScript RegExp)', () => {
    assert.deepEqual(
      SPEAKER_LINES.map(([line]) => [line, jsSpeaker(line)]),
      SPEAKER_LINES,
    );
  });

  it('marks bracketed and parenthesised timestamps, Otter times and cue timings, nothing else (JavaScript RegExp)', () => {
    assert.deepEqual(
      TIMESTAMP_LINES.map(([line]) => [line, jsTimestamps(line)]),
      TIMESTAMP_LINES,
    );
  });

  describe("in VS Code's tokenizer (vscode-textmate + Oniguruma from the integration rig)", () => {
    let tokenize: (line: string) => { text: string; scopes: string[] }[];

    before(async function () {
      const modules = path.join(ROOT, '.vscode-rig', 'node_modules', 'code-server', 'lib', 'vscode', 'node_modules');
      if (!fs.existsSync(path.join(modules, 'vscode-textmate')) || !fs.existsSync(path.join(modules, 'vscode-oniguruma'))) {
        console.log(`      skipped: the VS Code rig is not installed at ${modules} (scripts/setup-vscode-host.sh)`);
        this.skip();
      }
      const req = createRequire(path.join(modules, 'index.js'));
      const tm = req('vscode-textmate');
      const onig = req('vscode-oniguruma');
      const wasm = fs.readFileSync(path.join(modules, 'vscode-oniguruma', 'release', 'onig.wasm'));
      await onig.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
      const registry = new tm.Registry({
        onigLib: Promise.resolve({ createOnigScanner: (p: string[]) => new onig.OnigScanner(p), createOnigString: (s: string) => new onig.OnigString(s) }),
        loadGrammar: async (scope: string) => (scope === grammar.scopeName ? tm.parseRawGrammar(fs.readFileSync(GRAMMAR_FILE, 'utf8'), GRAMMAR_FILE) : null),
      });
      const g = await registry.loadGrammar(grammar.scopeName);
      tokenize = (line) =>
        g
          .tokenizeLine(line, tm.INITIAL)
          .tokens.map((t: { startIndex: number; endIndex: number; scopes: string[] }) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
    });

    const scoped = (line: string, scope: string) =>
      tokenize(line)
        .filter((t) => t.scopes.includes(scope))
        .map((t) => t.text);

    it('colours the speaker labels of the detect_speakers examples', () => {
      assert.deepEqual(
        SPEAKER_LINES.map(([line]) => [line, scoped(line, SPEAKER)[0] ?? null]),
        SPEAKER_LINES,
      );
    });

    it('colours timestamps, and transcription annotations as comments', () => {
      assert.deepEqual(
        TIMESTAMP_LINES.map(([line]) => [line, scoped(line, TIMESTAMP)]),
        TIMESTAMP_LINES,
      );
      assert.deepEqual(scoped('[laughs] okay, [inaudible 00:12] yes', ANNOTATION), ['[laughs]', '[inaudible 00:12]']);
      assert.deepEqual(scoped('<v.loud Inglis, Jake>Hi</v>', SPEAKER), ['Inglis, Jake']);
    });
  });
});
