/**
 * Messages between the Case Attributes webview (webview-ui/caseAttributes.ts) and its host
 * (src/ui/cases/caseAttributesPanel.ts). Types only: the webview bundle imports nothing else from src.
 *
 * The table has one row per case (by name) and one column per attribute definition (by name); a cell holds
 * the case's typed value of that attribute or null. Values are typed as the project stores them: text and
 * date (ISO 8601) as strings, numbers as numbers, booleans as booleans.
 */

/** The four attribute types. */
export type CaseAttributeType = 'text' | 'number' | 'date' | 'boolean';

/** One column: an attribute definition. */
export interface CaseAttributeColumn {
  name: string;
  /** the type cases give it (the most used when they differ) */
  type: CaseAttributeType;
  /** how many cases have a value */
  case_count: number;
}

/** One row: a case and its values by attribute name. */
export interface CaseAttributeRow {
  case_id: number;
  name: string;
  /** attribute name -> {type, value}; an attribute the case does not have is absent */
  values: Record<string, { type: CaseAttributeType; value: string | number | boolean }>;
}

/** What the table shows. */
export interface CaseAttributesModel {
  columns: CaseAttributeColumn[];
  rows: CaseAttributeRow[];
}

/** Host -> webview. `cellResult` answers one `setCell`: `error` is the tool's message when it failed. */
export type ToCaseAttributesWebview =
  { type: 'model'; model: CaseAttributesModel } | { type: 'cellResult'; case_id: number; attribute: string; error: string | null };

/**
 * Webview -> host. `setCell` with value null removes the attribute from the case; `addAttribute` and
 * `renameAttribute` ask the host for names (input boxes), `ready` asks for the model.
 */
export type FromCaseAttributesWebview =
  | { type: 'ready' }
  | { type: 'setCell'; case_id: number; attribute: string; attribute_type: CaseAttributeType; value: string | number | boolean | null }
  | { type: 'renameAttribute'; attribute: string }
  | { type: 'addAttribute' };
