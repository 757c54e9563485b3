/**
 * The formats export_data writes (src/exchange/exports.ts renders and writes them): each with its file
 * extensions and what it holds, and suggest_export_format's choice among them for a use case told in words.
 */

/** A format export_data writes. */
export type ExportFormat = 'codebook' | 'html' | 'segments_csv' | 'refi_qda' | 'qdc';

/** Every export format with the file extensions its output path may have and what it holds. */
export const EXPORT_FORMATS: Readonly<Record<ExportFormat, { extensions: readonly string[]; description: string }>> = {
  codebook: {
    extensions: ['.txt'],
    description: 'the codebook as plain text: categories and codes indented, colours, coding counts and (include_memos) memos',
  },
  html: {
    extensions: ['.html', '.htm'],
    description: 'a self-contained web page: every source with its coded passages highlighted, a legend of codes and colours, no scripts',
  },
  segments_csv: {
    extensions: ['.csv'],
    description: 'one CSV row per coded segment (source, code, start, end, text, memo, coder, created_at, ...) for R, Python or a spreadsheet',
  },
  refi_qda: { extensions: ['.qdpx'], description: 'the whole project as a REFI-QDA exchange file (.qdpx) for NVivo, ATLAS.ti, MAXQDA, QualCoder and others' },
  qdc: { extensions: ['.qdc'], description: 'the codebook alone as a REFI-QDA codebook file (.qdc), for another QDA tool' },
};

/** True when `format` names an export format. */
export function isExportFormat(format: string): format is ExportFormat {
  return Object.prototype.hasOwnProperty.call(EXPORT_FORMATS, format);
}

// ----- suggest_export_format ---------------------------------------------------------------------------------

/** Keywords (matched as whole words or word starts, case-insensitively) that point to each format, with why. */
const FORMAT_CUES: readonly { format: ExportFormat; words: readonly string[]; reason: string }[] = [
  {
    format: 'refi_qda',
    words: [
      'nvivo',
      'atlas',
      'atlas.ti',
      'atlasti',
      'maxqda',
      'qualcoder',
      'quirkos',
      'transana',
      'dedoose',
      'refi',
      'qdpx',
      'qde',
      'interoperab',
      'migrat',
      'switch',
      'another tool',
      'other tool',
      'other software',
      'archiv',
      'backup',
      'whole project',
      'colleague using',
      'exchange',
    ],
    reason:
      'REFI-QDA (.qdpx) is the exchange standard NVivo, ATLAS.ti, MAXQDA and QualCoder import: it carries the codebook, the sources with their texts, every coding with its coder and time, memos, cases and their attributes',
  },
  {
    format: 'codebook',
    words: [
      'codebook',
      'code book',
      'code list',
      'list of codes',
      'definitions',
      'review',
      'supervisor',
      'coding manual',
      'coding frame',
      'codeframe',
      'appendix',
      'methods section',
      'plain text',
      'txt',
    ],
    reason:
      'the plain-text codebook lists categories and codes with their colours, how often each was used and their memos: easy to read, review, paste into a methods appendix or compare in a diff',
  },
  {
    format: 'qdc',
    words: ['qdc', 'codebook exchange', 'import the codebook', 'share the codebook', 'codebook into', 'codebook to'],
    reason:
      'the REFI-QDA codebook file (.qdc) moves only the codebook (codes, nesting, colours, definitions) into another QDA tool, without sources or codings',
  },
  {
    format: 'html',
    words: [
      'read',
      'print',
      'browser',
      'web',
      'html',
      'present',
      'show',
      'participant',
      'highlight',
      'view',
      'share with',
      'send',
      'report',
      'pdf',
      'document',
    ],
    reason:
      'the HTML export shows every source with its coded passages highlighted in the codes’ colours and a legend: it opens in any browser, prints well, and needs no QDA software',
  },
  {
    format: 'segments_csv',
    words: [
      'statistic',
      'stats',
      'r',
      'rstudio',
      'tidyverse',
      'python',
      'pandas',
      'jupyter',
      'notebook',
      'spreadsheet',
      'excel',
      'csv',
      'quantitativ',
      'count',
      'frequenc',
      'cross-tab',
      'crosstab',
      'mixed method',
      'regression',
      'analysis',
      'analyse',
      'analyze',
      'table',
      'data frame',
      'dataframe',
      'sql',
    ],
    reason:
      'the segments CSV has one row per coded segment (source, code, positions, text, memo, coder, time): it loads straight into R, Python (pandas) or a spreadsheet for counting and statistics',
  },
];

/** A recommendation of {@link suggestExportFormat}. */
export interface ExportSuggestion {
  use_case: string;
  recommended: ExportFormat;
  extension: string;
  reasons: string[];
  /** the keywords of the use case that pointed to the recommended format */
  matched: string[];
  /** the other formats that fit too, best first, with why */
  alternatives: { format: ExportFormat; extension: string; reason: string; matched: string[] }[];
  /** every format export_data writes */
  formats: { format: ExportFormat; extensions: readonly string[]; description: string }[];
}

/** True when `cue` occurs in `text` as a word or the start of one (`text` lower-cased, words split on non-letters). */
function matchesCue(text: string, cue: string): boolean {
  const escaped = cue.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // a one- or two-letter cue (R) must be a whole word; longer ones may start a word (statistic -> statistics)
  const tail = cue.length <= 2 ? '(?![\\p{L}\\p{N}])' : '';
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}${tail}`, 'u').test(text);
}

/**
 * Recommends an export format for a use case described in words, by keywords: sharing with NVivo, ATLAS.ti,
 * MAXQDA or another QDA tool -> refi_qda; reviewing the codebook -> codebook (or qdc to move it into another
 * tool); reading, printing or showing -> html; statistics, R, Python, spreadsheets -> segments_csv. The format
 * with the most matching cues wins (ties in that order); with no cue at all, refi_qda, the most complete.
 */
export function suggestExportFormat(useCase: string): ExportSuggestion {
  const text = useCase.toLowerCase();
  const scored = FORMAT_CUES.map((cue, order) => ({ ...cue, order, matched: cue.words.filter((w) => matchesCue(text, w)) }));
  const ranked = [...scored].sort((a, b) => b.matched.length - a.matched.length || a.order - b.order);
  const best = ranked[0] as (typeof ranked)[number];
  const none = best.matched.length === 0;
  const reasons = none
    ? ['No keyword of the use case points to a particular format, so the most complete one is recommended: ' + (scored[0] as (typeof scored)[number]).reason]
    : [`The use case mentions ${best.matched.map((m) => `"${m}"`).join(', ')}: ${best.reason}`];
  const recommended = none ? 'refi_qda' : best.format;
  if (recommended === 'refi_qda')
    reasons.push('Positions in the file count Unicode code points, as the standard says; tools that count otherwise may shift codings after emoji.');
  return {
    use_case: useCase,
    recommended,
    extension: EXPORT_FORMATS[recommended].extensions[0] as string,
    reasons,
    matched: none ? [] : best.matched,
    alternatives: ranked
      .filter((r) => r.format !== recommended && r.matched.length > 0)
      .map((r) => ({ format: r.format, extension: EXPORT_FORMATS[r.format].extensions[0] as string, reason: r.reason, matched: r.matched })),
    formats: (Object.keys(EXPORT_FORMATS) as ExportFormat[]).map((f) => ({
      format: f,
      extensions: EXPORT_FORMATS[f].extensions,
      description: EXPORT_FORMATS[f].description,
    })),
  };
}
