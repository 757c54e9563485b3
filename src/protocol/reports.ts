/**
 * Messages between the Reports webview (webview-ui/reports.ts) and the extension
 * (src/ui/reports/reportsPanel.ts). Types only: the webview imports them with `import type`.
 *
 * Every name in these messages (codes, cases, sources, coders, attribute values) is untrusted text: the
 * webview renders it with textContent or on the canvas, never as markup.
 */

/** The views of the Reports panel. */
export type ReportsViewId = 'frequency' | 'cooccurrence' | 'agreement' | 'disagreements' | 'human_ai' | 'case' | 'attribute' | 'document_attribute';

/** The units of the agreement view (generate_coder_comparison's `unit`). */
export type AgreementUnit = 'character' | 'segment' | 'sentence' | 'paragraph';

/**
 * What the webview asks to see. `coders` (two or more) and `unit` pick the agreement's coders and unit
 * (default: the two coders with most segments, characters); `attribute` the attribute (default: the first).
 */
export type ReportRequest =
  | { view: 'frequency' }
  | { view: 'cooccurrence' }
  | { view: 'agreement'; coders?: string[]; unit?: AgreementUnit }
  | { view: 'disagreements'; coders?: string[]; unit?: AgreementUnit }
  | { view: 'human_ai'; unit?: AgreementUnit }
  | { view: 'case' }
  | { view: 'attribute'; attribute?: string }
  | { view: 'document_attribute'; attribute?: string };

/** A code on an axis: its id, name and colour (`#RRGGBB`). */
export interface AxisCode {
  code_id: number;
  name: string;
  color: string;
}

/** A matrix for a heat map: rows are codes, `matrix[i][j]` the count of row i in column j. */
export interface HeatMap {
  rows: AxisCode[];
  /** `case_ids`: a column of cases (code x case, code x case attribute); `source_ids`: of sources (code x document attribute) */
  columns: { key: string; label: string; case_ids?: number[]; source_ids?: number[]; code_id?: number }[];
  matrix: number[][];
  /** rows and columns before the view kept the largest (undefined: all shown) */
  total_rows?: number;
  total_columns?: number;
}

/** One code of the agreement table (percentages 0-100; kappa null when undefined). */
export interface AgreementRow {
  code_id: number;
  name: string;
  percent_agreement: number | null;
  kappa: number | null;
  both: number;
  only_a: number;
  only_b: number;
  /** the kappa's (Cohen's with two coders, Fleiss' with more) seeded bootstrap 95% interval (null: none) */
  kappa_low?: number | null;
  kappa_high?: number | null;
}

/** One measure of a code's agreement table: its name, the coders it is about ("all" or a pair), value and 95% interval (null: undefined). */
export interface AgreementMeasureRow {
  measure: string;
  coders: string;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** A code's (or all codes') agreement measures for any number of coders. */
export interface AgreementMeasureTable {
  code_id: number;
  name: string;
  units: number;
  measures: AgreementMeasureRow[];
}

/** A disagreement shown with its text: who coded the unit and who did not. */
export interface AgreementDisagreement {
  code: string;
  source: string;
  start_pos: number;
  end_pos: number;
  text: string;
  coded_by: string[];
  not_coded_by: string[];
}

/** A value with its seeded bootstrap 95% interval (null: undefined or not computed). */
export interface IntervalValue {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** One coding of a coder within a disagreement's passage: offsets from the passage's start (code points), its code and colour, whether it is the disputed code. */
export interface PassageSpanView {
  start: number;
  end: number;
  code: string;
  color: string;
  disputed: boolean;
}

/** A disagreement on its passage: the passage's text and place, the disputed stretches (offsets) and each coder's codings there, one column per coder. */
export interface DisagreementPassageView {
  code: string;
  color: string;
  source_id: number;
  source: string;
  start_pos: number;
  end_pos: number;
  text: string;
  disputed: { start: number; end: number }[];
  coders: { coder: string; coded: boolean; spans: PassageSpanView[] }[];
}

/** One code (or all codes) of an agent against one human: percent agreement (0-100), Cohen's kappa and Krippendorff's alpha with intervals. */
export interface AgentCodeRow {
  code: string;
  units: number;
  percent_agreement: IntervalValue;
  cohen_kappa: IntervalValue;
  krippendorff_alpha: IntervalValue;
}

/** A suggesting coder's suggestion outcomes of one code or one week (rates of the decided; null when none was decided). */
export interface SuggestionOutcomeRow {
  coder: string;
  /** the code's name (per code) or the week's Monday, YYYY-MM-DD (per week) */
  label: string;
  suggested: number;
  accepted: number;
  edited: number;
  rejected: number;
  pending: number;
  acceptance_rate: number | null;
  edit_rate: number | null;
  rejection_rate: number | null;
}

/** Extension -> webview: the data of one view, or a request to switch views. */
export type ToReportsWebview =
  | {
      type: 'frequency';
      project: string;
      codes: (AxisCode & { segment_count: number; source_count: number })[];
      unused: number;
      segments: number;
      sources: number;
    }
  | { type: 'cooccurrence'; project: string; heat: HeatMap; total_overlaps: number; same_code_overlaps: number }
  | {
      type: 'agreement';
      project: string;
      coders: string[];
      /** the first two selected coders (the 2x2 columns of `rows`), null when fewer than two */
      pair: [string, string] | null;
      /** the coders compared (two or more) and the unit */
      selected?: string[];
      unit?: AgreementUnit;
      /** with two coders: Cohen's kappa and the 2x2 counts; with more: Fleiss' kappa and zero counts */
      rows: AgreementRow[];
      /** per code (then all codes) every measure with its interval */
      tables?: AgreementMeasureTable[];
      disagreements?: AgreementDisagreement[];
      overall: AgreementRow | null;
      total_characters: number;
      source_count: number;
      method: string;
      /** why there is no table (fewer than two coders, an error) */
      note?: string;
    }
  | {
      type: 'disagreements';
      project: string;
      coders: string[];
      /** the coders compared (two or more; null when fewer than two coders exist) and the unit */
      selected: string[] | null;
      unit: AgreementUnit;
      passages: DisagreementPassageView[];
      /** disagreements found (at most 25 per code), before merging into passages */
      total: number;
      note?: string;
    }
  | {
      type: 'human_ai';
      project: string;
      unit: AgreementUnit;
      agents: string[];
      humans: string[];
      /** each agent with segments against each human, separately */
      pairs: { agent: string; human: string; sources: number; codes: AgentCodeRow[]; overall: AgentCodeRow | null; note: string | null }[];
      /** each suggesting coder's outcomes per code and per week */
      by_code: SuggestionOutcomeRow[];
      by_week: SuggestionOutcomeRow[];
      note?: string;
    }
  | { type: 'case'; project: string; heat: HeatMap }
  | { type: 'attribute'; project: string; attributes: string[]; attribute: string | null; heat: HeatMap }
  | { type: 'document_attribute'; project: string; attributes: string[]; attribute: string | null; heat: HeatMap }
  | { type: 'noProject' }
  | { type: 'show'; view: ReportsViewId };

/** What a click in the webview points at: the coded segments behind one bar, cell or row. */
export type DrillTarget =
  | { kind: 'code'; code_id: number }
  | { kind: 'pair'; code_a: number; code_b: number }
  | { kind: 'coders'; code_id: number; coders: string[] }
  | { kind: 'cases'; code_id: number; case_ids: number[]; column: string }
  | { kind: 'sources'; code_id: number; source_ids: number[]; column: string };

/** The export formats (export_report). */
export type ExportFormat = 'csv' | 'json' | 'html';

/** Webview -> extension. */
export type FromReportsWebview =
  | { type: 'ready' }
  | { type: 'request'; request: ReportRequest }
  | { type: 'drill'; target: DrillTarget }
  | { type: 'export'; format: ExportFormat; request: ReportRequest }
  /** a button of an empty case view: the Cases view's command it names (New Case from Sources, the Case Attributes table) */
  | { type: 'caseCommand'; command: 'newFromSources' | 'openAttributes' }
  /** a disagreement's "Open" button: the source at the passage's range (code points) */
  | { type: 'openSource'; source_id: number; start_pos: number; end_pos: number }
  /** after a view is drawn: bars, cells or table rows drawn, and the canvas pixels painted (0 for tables) */
  | { type: 'rendered'; view: ReportsViewId; items: number; painted: number };
