import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import { countOf } from '../../core/plural';
import { overlapsTruncatedMessage, projectCodebookHealth, type CodebookProblem } from '../../domain/codebookHealth';
import type { CodeWithCounts } from '../../domain/ports';
import { replacesProjectState, type EventRecord } from '../../domain/events';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { toVsRange } from '../documents/sourceDocuments';
import { settings } from '../host/settings';
import type { Workbench } from '../workbench';

/** The diagnostic collection's name (and each diagnostic's `source`). */
export const CODEBOOK_DIAGNOSTICS = 'marginalia-codebook';
/** How long after the last change the list is recomputed (milliseconds). */
const DEBOUNCE_MS = 750;
/**
 * The URI scheme of the read-only "code cards" the codebook-level problems are attached to: one document
 * per code, `marginalia-codebook:/Codebook/<code name>?code=<code_id>`, and `marginalia-codebook:/Codebook`
 * for the codebook as a whole. The Problems panel groups the problems by code under the code's name.
 */
export const CODEBOOK_SCHEME = 'marginalia-codebook';

/** The code card URI of a code (the name's slashes become U+2215 so the name stays one path segment). */
export function codeCardUri(code: Pick<CodeWithCounts, 'code_id' | 'name'>): vscode.Uri {
  return vscode.Uri.from({ scheme: CODEBOOK_SCHEME, path: `/Codebook/${code.name.replace(/[/\\]/g, '\u2215')}`, query: `code=${code.code_id}` });
}

/** The code a code card URI names, or undefined (another URI, the codebook's own card). */
export function codeIdOfCard(uri: vscode.Uri): number | undefined {
  if (uri.scheme !== CODEBOOK_SCHEME) return undefined;
  const m = /(?:^|&)code=(\d+)(?:&|$)/.exec(uri.query);
  return m ? Number(m[1]) : undefined;
}

/** The URI of the codebook's own card (problems about the codebook as a whole). */
const CODEBOOK_CARD = vscode.Uri.from({ scheme: CODEBOOK_SCHEME, path: '/Codebook' });

/**
 * Codebook health in the Problems panel: the problems of src/domain/codebookHealth.ts as diagnostics.
 * Codebook-level problems (no memo, near-duplicate names, used once) are attached to the code's card, a
 * read-only virtual document ({@link CODEBOOK_SCHEME}) naming the code, its category, passages, memo and
 * problems; a near-duplicate pair to the older code's card. Clicking such a problem opens the card and
 * reveals and selects the code in the Codes view (never the binary `.qda`, which the problems were attached
 * to before: issue 13, item 11); each also offers quick fixes (Reveal in Codes, Edit Memo). Same-code
 * overlaps are attached to the source's document (its workspace file or `qda:` document) at the overlap.
 * Recomputed (debounced) after changes to codes, segments and sources, on project open and close, and
 * when `marginalia.codebookHealth.enabled` changes (off: the list is cleared).
 */
export class CodebookDiagnostics implements vscode.Disposable, vscode.TextDocumentContentProvider, vscode.CodeActionProvider {
  readonly collection = vscode.languages.createDiagnosticCollection(CODEBOOK_DIAGNOSTICS);
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly updated = new vscode.EventEmitter<number>();
  /** Fires after each recomputation with the number of problems listed. */
  readonly onDidUpdate = this.updated.event;
  private readonly cardsChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.cardsChanged.event;
  /** the problems listed on each card at the last recomputation, by URI */
  private onCards = new Map<string, CodebookProblem[]>();
  /** the last card revealed, and when (a click selects and activates: one reveal) */
  private lastReveal = { key: '', at: 0 };

  /**
   * `revealCode` shows a code in the Codes view (default: the `marginalia.codes.reveal` command, without
   * moving the keyboard focus out of the editor).
   */
  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
    private readonly revealCode: (codeId: number) => Thenable<unknown> = (codeId) =>
      vscode.commands.executeCommand('marginalia.codes.reveal', { codeId, focus: false }),
  ) {
    this.subscriptions.push(
      this.collection,
      this.updated,
      this.cardsChanged,
      vscode.workspace.registerTextDocumentContentProvider(CODEBOOK_SCHEME, this),
      vscode.languages.registerCodeActionsProvider({ scheme: CODEBOOK_SCHEME }, this, { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] }),
      vscode.window.onDidChangeActiveTextEditor((ed) => {
        if (ed) this.revealCardOf(ed.document.uri);
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.kind !== vscode.TextEditorSelectionChangeKind.Keyboard) this.revealCardOf(e.textEditor.document.uri);
      }),
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
    const codes = new Map(project.repo.listCodes().map((c) => [c.code_id, c]));
    const cardOf = (p: CodebookProblem) => {
      const code = codes.get(p.code_ids[0] ?? -1);
      return code ? codeCardUri(code) : CODEBOOK_CARD;
    };
    const cards = new Map<string, CodebookProblem[]>();
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
        // an open document shows the stored text unless it lags behind (a qda: document opened before its source
        // existed, or typing not stored yet): then the stored text places the range
        located = { uri, range: open && open.getText() === text ? (s, e) => toVsRange(open, s, e) : rangeInText(text) };
      }
      texts.set(id, located);
      return located;
    };
    for (const p of health.problems) {
      if (p.kind === 'same_code_overlap' && p.source_id !== undefined) {
        const at = sourceLocator(p.source_id);
        if (at) put(at.uri, diagnostic(p, at.range(p.start_pos ?? 0, p.end_pos ?? 0)));
      } else {
        const card = cardOf(p);
        put(card, diagnostic(p, new vscode.Range(0, 0, 0, 0)));
        const list = cards.get(card.toString()) ?? [];
        list.push(p);
        cards.set(card.toString(), list);
      }
    }
    if (health.overlaps_truncated) {
      const d = new vscode.Diagnostic(
        new vscode.Range(0, 0, 0, 0),
        overlapsTruncatedMessage(health.counts.same_code_overlap, health.problems.filter((p) => p.kind === 'same_code_overlap').length),
        vscode.DiagnosticSeverity.Information,
      );
      d.source = CODEBOOK_DIAGNOSTICS;
      put(CODEBOOK_CARD, d);
    }
    this.collection.set([...byUri.values()].map((e) => [e.uri, e.list]));
    // open cards show the new state (a fixed problem disappears from the card too)
    const before = this.onCards;
    this.onCards = cards;
    for (const doc of vscode.workspace.textDocuments) {
      if (
        doc.uri.scheme === CODEBOOK_SCHEME &&
        (before.has(doc.uri.toString()) || cards.has(doc.uri.toString()) || doc.uri.toString() === CODEBOOK_CARD.toString())
      )
        this.cardsChanged.fire(doc.uri);
    }
    this.updated.fire(health.problems.length);
    return health.problems.length;
  }

  /** The text of a card: the code's name, category, passages, memo and listed problems (or the codebook's summary). */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const repo = this.wb.repo();
    if (!repo) return 'No Marginalia project is open.\n';
    const problems = this.onCards.get(uri.toString()) ?? [];
    const list = (ps: CodebookProblem[]) => (ps.length === 0 ? ['  No problems.'] : ps.map((p) => `  • ${p.message}`));
    const codeId = codeIdOfCard(uri);
    if (codeId === undefined) {
      const all = [...this.onCards.values()].flat();
      return [
        'Codebook health',
        '',
        `${countOf(repo.listCodes().length, 'code')}, ${countOf(all.length, 'problem')} listed on the codes.`,
        '',
        ...list(problems),
        '',
      ].join('\n');
    }
    const code = repo.getCode(codeId);
    if (!code) return 'This code no longer exists.\n';
    const category = code.category_id === null ? undefined : repo.getCategory(code.category_id)?.name;
    const passages = code.segment_count + code.av_segment_count;
    return [
      code.name,
      `Code${category ? ` in the category "${category}"` : ' at the top level'} · ${countOf(passages, 'coded passage')} · colour ${code.color}`,
      '',
      'Memo',
      ...(code.memo?.trim() ? code.memo.split(/\r\n|\r|\n/).map((l) => `  ${l}`) : ['  (none yet: right-click the code in the Codes view, Edit Memo…)']),
      '',
      'Codebook health',
      ...list(problems),
      '',
    ].join('\n');
  }

  /** Quick fixes on a card's problems: reveal the code in the Codes view; edit its memo when it has none. */
  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const codeId = codeIdOfCard(document.uri);
    const code = codeId === undefined ? undefined : this.wb.repo()?.getCode(codeId);
    if (!code) return [];
    const ours = context.diagnostics.filter((d) => d.source === CODEBOOK_DIAGNOSTICS);
    const reveal = new vscode.CodeAction(`Reveal "${code.name}" in the Codes view`, vscode.CodeActionKind.QuickFix);
    reveal.command = { command: 'marginalia.codes.reveal', title: reveal.title, arguments: [{ codeId: code.code_id }] };
    reveal.diagnostics = ours;
    const actions = [reveal];
    const noMemo = ours.filter((d) => d.code === 'code_without_memo');
    if (noMemo.length > 0) {
      const memo = new vscode.CodeAction(`Write a memo for "${code.name}"…`, vscode.CodeActionKind.QuickFix);
      memo.command = { command: 'marginalia.codes.editMemo', title: memo.title, arguments: [{ kind: 'code', code }] };
      memo.diagnostics = noMemo;
      memo.isPreferred = true;
      actions.unshift(memo);
    }
    return actions;
  }

  /** Reveals the code of a card shown in an editor (a click on its problem opened it), once per click. */
  private revealCardOf(uri: vscode.Uri): void {
    const codeId = codeIdOfCard(uri);
    if (codeId === undefined) return;
    const key = uri.toString();
    const now = Date.now();
    if (this.lastReveal.key === key && now - this.lastReveal.at < 300) return;
    this.lastReveal = { key, at: now };
    void Promise.resolve(this.revealCode(codeId)).catch((e: unknown) => this.wb.logger.warn(`revealing code ${codeId} failed: ${String(e)}`));
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
  return (
    e.event_type.startsWith('coding.') ||
    e.event_type === 'source.deleted' ||
    e.event_type === 'source.text_edited' ||
    e.event_type === 'source.text_reconciled' ||
    replacesProjectState(e.event_type)
  );
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
