/**
 * "Set Document Attribute..." on a source in the Sources view (issue 13 item 5): the researcher picks one of
 * the source's attributes (or any attribute name another source has, or a new name), its type (text, number,
 * date, boolean: the current type, else the type other sources give it, else text) and its value, and the
 * call goes through the one pipeline as set_source_attribute, as the researcher. "(remove)" deletes the
 * attribute (value null). Every answer can be passed as an argument instead (tests, keybindings), which skips
 * its dialog. Dates are ISO 8601 (YYYY-MM-DD or a datetime); the input box checks the value before it is sent,
 * and the tool checks it again (its INVALID_ARGUMENTS message is shown on failure).
 */
import * as vscode from 'vscode';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import { setSourceAttributeTool } from '../../tools/sourceAttributeTools';
import type { SourcesNode } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';

const TYPES: readonly AttributeType[] = ['text', 'number', 'date', 'boolean'];
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** The value answer that deletes the attribute. */
const REMOVE = '(remove)';

/** The problem with `raw` as a value of `type` for the input box, or undefined when it is fine. */
export function valueProblem(raw: string, type: AttributeType): string | undefined {
  const v = raw.trim();
  if (type === 'number' && !(NUMERIC.test(v) && Number.isFinite(Number(v)))) return 'Enter a number, e.g. 42 or 3.5';
  if (type === 'date' && !ISO_DATE.test(v)) return 'Enter an ISO 8601 date (YYYY-MM-DD) or datetime (YYYY-MM-DDTHH:MM:SSZ)';
  if (type === 'boolean' && !/^(true|false)$/i.test(v)) return 'Enter true or false';
  return undefined;
}

/**
 * Asks for an attribute's value of type `type`: true/false from a list (with "(remove)" when `removable` and a
 * value is set), else typed in (empty removes a set value; numbers parsed). Resolves to the value, null to
 * remove it, or undefined when cancelled.
 */
export async function askAttributeValue(q: {
  title: string;
  type: AttributeType;
  current: { value: AttributeValue } | undefined;
  removable: boolean;
  removePrompt: string | undefined;
}): Promise<AttributeValue | null | undefined> {
  const { title, type: t, current } = q;
  if (t === 'boolean') {
    const picked = await vscode.window.showQuickPick(['true', 'false', ...(current && q.removable ? [REMOVE] : [])], { title });
    if (!picked) return undefined;
    return picked === REMOVE ? null : picked === 'true';
  }
  const raw = await vscode.window.showInputBox({
    title: `${title} (${t})`,
    value: current ? String(current.value) : '',
    prompt: q.removePrompt,
    validateInput: (v) => (v.trim() === '' ? (current ? undefined : 'Enter a value') : valueProblem(v, t)),
  });
  if (raw === undefined) return undefined;
  return raw.trim() === '' ? null : t === 'number' ? Number(raw.trim()) : raw.trim();
}

/**
 * Sets (or with value null removes) a document attribute of the source `target` (a Sources view node or a
 * source id), asking for whatever is not given. Resolves with set_source_attribute's result, or undefined when
 * cancelled or failed (the error was shown).
 */
export async function setDocumentAttribute(
  wb: Workbench,
  target?: SourcesNode | number,
  name?: string,
  value?: AttributeValue | null,
  type?: AttributeType,
): Promise<ReturnType<typeof setSourceAttributeTool.run> | undefined> {
  const repo = wb.repo();
  const sourceId = typeof target === 'number' ? target : target?.kind === 'source' ? target.source.source_id : undefined;
  if (!repo || sourceId === undefined) return undefined;
  const source = repo.getSource(sourceId);
  if (!source) return undefined;
  const all = repo.listSourceAttributes();
  const mine = new Map(all.filter((a) => a.source_id === sourceId).map((a) => [a.name, a]));
  const typeElsewhere = new Map(all.map((a) => [a.name, a.type]));

  let attribute = name;
  if (attribute === undefined) {
    const NEW = '$(add) New attribute...';
    const names = [...new Set([...mine.keys(), ...typeElsewhere.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const picked = await vscode.window.showQuickPick(
      [
        ...names.map((n) => {
          const own = mine.get(n);
          return { label: n, description: own ? `${String(own.value)} (${own.type})` : `not set (${typeElsewhere.get(n)} on other sources)` };
        }),
        { label: NEW, description: '' },
      ],
      { title: `Document attribute of "${source.name}"`, placeHolder: 'Pick an attribute to set or change' },
    );
    if (!picked) return undefined;
    attribute =
      picked.label === NEW
        ? await vscode.window.showInputBox({
            title: 'New document attribute: name',
            placeHolder: 'e.g. Site, Wave, Interview date',
            validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
          })
        : picked.label;
    if (!attribute) return undefined;
  }
  const current = mine.get(attribute.trim());

  let kind = type;
  if (kind === undefined && value === undefined) {
    const preferred = current?.type ?? typeElsewhere.get(attribute.trim()) ?? 'text';
    const picked = await vscode.window.showQuickPick(
      [...TYPES]
        .sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0))
        .map((t) => ({ label: t, description: t === preferred ? (current ? 'current type' : 'suggested') : '' })),
      { title: `"${attribute}": type` },
    );
    if (!picked) return undefined;
    kind = picked.label as AttributeType;
  }

  let answer: AttributeValue | null | undefined = value;
  if (answer === undefined) {
    answer = await askAttributeValue({
      title: `"${attribute}" of "${source.name}"`,
      type: kind ?? 'text',
      current,
      removable: true,
      removePrompt: current ? `Leave empty to remove the attribute (now ${String(current.value)})` : undefined,
    });
    if (answer === undefined) return undefined;
  }
  return wb.call(setSourceAttributeTool, { source_id: sourceId, attribute_name: attribute, value: answer, ...(kind && answer !== null ? { type: kind } : {}) });
}
