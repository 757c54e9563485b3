import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import { overlapsTruncatedMessage, projectCodebookHealth, type CodebookProblem } from '../../domain/codebookHealth';
import type { EventRecord } from '../../domain/events';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { toVsRange } from '../documents/sourceDocuments';
import { settings } from '../host/settings';
import type { Workbench } from '../workbench';

/** The diagnostic collection's name (and each diagnostic's `source`). */
export const CODEBOOK_DIAGNOSTICS = 'marginalia-codebook';
/** How long after the last change the list is recomputed (milliseconds). */
const DEBOUNCE_MS = 750;

/**
 * Codebook health in the Problems panel: the problems of src/domain/codebookHealth.ts as diagnostics.
 * Codebook-level problems (no memo, near-duplicate names, used once) are attached to the project file;
 * same-code overlaps to the source's document (its workspace file or `qda:` document) at the overlap.
 * Recomputed (debounced) after changes to codes, segments and sources, on project open and close, and
 * when `marginalia.codebookHealth.enabled` changes (off: the list is cleared).
 */
export class CodebookDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection(CODEBOOK_DIAGNOSTICS);
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly updated = new vscode.EventEmitter<number>();
  /** Fires after each recomputation with the number of problems listed. */
  readonly onDidUpdate = this.updated.event;

  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
  ) {
    this.subscriptions.push(
      this.collection,
      this.updated,
      wb.pipeline.onEvents((events) => {
        if (events.some(changesHealth)) this.schedule();
      }),
      wb.controller.onDidChangeProject(() => this.schedule(0)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('marginalia.codebookHealth')) this.schedule(0);
      }),
    );
  }

  /** Recomputes after `ms` (restarting the wait on each call). */
  schedule(ms = DEBOUNCE_MS): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.refresh();
      } catch (e) {
        this.wb.logger.error('codebook health failed', e);
      }
    }, ms);
  }

  /** Recomputes the list now. Returns the number of problems listed. */
  refresh(): number {
    const project = this.wb.controller.current();
    this.collection.clear();
    if (!project || !settings.codebookHealthEnabled()) {
      this.updated.fire(0);
      return 0;
    }
    const health = projectCodebookHealth(project.repo, { usedOnceAfter: settings.codebookHealthUsedOnceAfter() });
    const projectUri = vscode.Uri.file(project.path);
    const byUri = new Map<string, { uri: vscode.Uri; list: vscode.Diagnostic[] }>();
    const put = (uri: vscode.Uri, d: vscode.Diagnostic) => {
      const key = uri.toString();
      let entry = byUri.get(key);
      if (!entry) byUri.set(key, (entry = { uri, list: [] }));
      entry.list.push(d);
    };
    const texts = new Map<number, { uri: vscode.Uri; range: (start: number, end: number) => vscode.Range } | null>();
    const sourceLocator = (id: number) => {
      if (texts.has(id)) return texts.get(id) ?? null;
      const source = project.repo.getSource(id);
      const text = source ? project.repo.getSourceText(id) : null;
      let located: { uri: vscode.Uri; range: (start: number, end: number) => vscode.Range } | null = null;
      if (source && text !== null) {
        const uri = this.docs.uriFor(source);
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        located = { uri, range: open ? (s, e) => toVsRange(open, s, e) : rangeInText(text) };
      }
      texts.set(id, located);
      return located;
    };
    for (const p of health.problems) {
      if (p.kind === 'same_code_overlap' && p.source_id !== undefined) {
        const at = sourceLocator(p.source_id);
        if (at) put(at.uri, diagnostic(p, at.range(p.start_pos ?? 0, p.end_pos ?? 0)));
      } else put(projectUri, diagnostic(p, new vscode.Range(0, 0, 0, 0)));
    }
    if (health.overlaps_truncated) {
      const d = new vscode.Diagnostic(
        new vscode.Range(0, 0, 0, 0),
        overlapsTruncatedMessage(health.counts.same_code_overlap, health.problems.filter((p) => p.kind === 'same_code_overlap').length),
        vscode.DiagnosticSeverity.Information,
      );
      d.source = CODEBOOK_DIAGNOSTICS;
      put(projectUri, d);
    }
    this.collection.set([...byUri.values()].map((e) => [e.uri, e.list]));
    this.updated.fire(health.problems.length);
    return health.problems.length;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
  }
}

function diagnostic(p: CodebookProblem, range: vscode.Range): vscode.Diagnostic {
  const d = new vscode.Diagnostic(range, p.message, p.severity === 'warning' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Information);
  d.source = CODEBOOK_DIAGNOSTICS;
  d.code = p.kind;
  return d;
}

/** Events after which the codebook's health may differ. */
function changesHealth(e: EventRecord): boolean {
  return e.event_type.startsWith('coding.') || e.event_type === 'source.deleted' || e.event_type === 'source.text_edited' || e.event_type === 'source.text_reconciled' || e.event_type === 'project.snapshot_restored';
}

/**
 * Editor ranges in `text` without opening it as a document: code point offsets to lines and UTF-16
 * characters, with line breaks as VS Code counts them (`\r\n`, `\n` or a lone `\r`).
 */
export function rangeInText(text: string): (start: number, end: number) => vscode.Range {
  const map = new OffsetMap(text);
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      lineStarts.push(i + 1);
    } else if (c === 10) lineStarts.push(i + 1);
  }
  const position = (cp: number) => {
    const u = map.toUtf16(cp);
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= u) lo = mid;
      else hi = mid - 1;
    }
    return new vscode.Position(lo, u - (lineStarts[lo] as number));
  };
  return (start, end) => new vscode.Range(position(start), position(end));
}
