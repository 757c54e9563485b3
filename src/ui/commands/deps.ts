import type * as vscode from 'vscode';
import type { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { RetrievalView } from '../retrieval/retrievalView';
import type { CodesTreeProvider } from '../trees/codesTreeProvider';
import type { SourcesTreeProvider } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';

/** Everything the coding, codes and sources commands use. */
export interface CommandDeps {
  wb: Workbench;
  docs: SourceDocuments;
  codesTree: CodesTreeProvider;
  sourcesTree: SourcesTreeProvider;
  retrieval: RetrievalView;
  decorations: CodedSegmentDecorations;
  /** stores typed edits before a command reads positions */
  flushEdits: () => Promise<void>;
  /** the workspace's memento (the last code used, for Code Selection with Last Code) */
  state: vscode.Memento;
}
