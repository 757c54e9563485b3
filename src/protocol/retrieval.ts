/**
 * Messages between the Retrieval webview (webview-ui/retrieval.ts) and the extension
 * (src/ui/retrieval/retrievalView.ts). Types only: the webview imports them with `import type`.
 * Nothing here carries a text position: the page names passages by source and speaker or paragraph, and
 * asks the extension to open one by its index in the last result.
 */

/** How codes combine (src/domain/retrieval.ts). */
export type Combination = 'or' | 'and' | 'overlap';

/** A typed attribute value (text and dates are strings). */
export type AttributeValueMsg = string | number | boolean;

/** What the researcher asked for. Ids are the project's; `*_attribute` pick one name = value pair. */
export interface RetrievalQueryMsg {
  code_ids: number[];
  combine: Combination;
  source_id?: number;
  folder_id?: number;
  case_id?: number;
  source_attribute?: { name: string; value: AttributeValueMsg };
  case_attribute?: { name: string; value: AttributeValueMsg };
  coder?: string;
}

/** An attribute with the values it takes in the project, for the filter lists. */
export interface AttributeChoice {
  name: string;
  values: AttributeValueMsg[];
}

/** What the page can offer: the project's codes, sources, folders, cases, attributes and coders, by name. */
export interface RetrievalOptions {
  codes: { code_id: number; name: string; color: string; category: string | null; count: number }[];
  sources: { source_id: number; name: string }[];
  /** folder names with their parents ("Round 1 / Lagos") */
  folders: { folder_id: number; name: string }[];
  cases: { case_id: number; name: string }[];
  source_attributes: AttributeChoice[];
  case_attributes: AttributeChoice[];
  coders: string[];
}

/** One passage as the page shows it. */
export interface PassageView {
  source_name: string;
  /** the speaker, else "¶ 3" */
  place: string;
  codes: { name: string; color: string }[];
  coders: string[];
  /** the whole passage */
  text: string;
  /** made by an agent (any segment) */
  by_agent: boolean;
}

/** Extension -> webview. */
export type ToRetrievalWebview =
  | { type: 'options'; options: RetrievalOptions; query: RetrievalQueryMsg; project: boolean }
  | { type: 'result'; title: string; filters: string[]; summary: string; passages: PassageView[] }
  | { type: 'error'; message: string };

/** Webview -> extension. */
export type FromRetrievalWebview =
  | { type: 'ready' }
  | { type: 'query'; query: RetrievalQueryMsg }
  | { type: 'open'; index: number }
  | { type: 'export'; format: 'csv' | 'md' | 'html' }
  | { type: 'search' };
