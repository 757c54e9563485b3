/**
 * Undo's actions and events in words, past tense, naming codes, categories, cases, sources and folders as the
 * project has them now, else as the events last named them: for undo/redo results (undoRedo.ts), snapshot
 * titles (src/vcs/snapshotter.ts) and Agent Activity (src/ui/activity).
 */
import type { DomainEvent, EventRecord } from './events';
import type { ProjectRepository } from './ports';

/** A payload value read as a number (payloads are typed by event type; see events.ts). */
export const num = (v: unknown) => v as number;
/** A payload value read as a string. */
export const str = (v: unknown) => v as string;

// ---------------------------------------------------------------------------------------------------------
// in words

/** Names of codes, categories, cases, sources and folders: the project's current ones, else the last seen in events. */
export class Names {
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly repo: ProjectRepository,
    events: readonly (EventRecord | DomainEvent)[],
  ) {
    for (const e of events) this.learn(e);
  }

  /** Remembers the names an event carries. */
  learn(e: EventRecord | DomainEvent): void {
    const p = e.payload;
    const put = (kind: string, id: unknown, name: unknown) => {
      if (typeof id === 'number' && typeof name === 'string') this.seen.set(`${kind}:${id}`, name);
    };
    switch (e.event_type) {
      case 'coding.code_created':
      case 'coding.code_deleted':
        put('code', p.code_id, p.name);
        break;
      case 'coding.code_renamed':
        put('code', p.code_id, p.new_name);
        break;
      case 'coding.category_created':
      case 'coding.category_deleted':
        put('category', p.category_id, p.name);
        break;
      case 'coding.category_renamed':
        put('category', p.category_id, p.new_name);
        break;
      case 'case.created':
      case 'case.deleted':
        put('case', p.case_id, p.name);
        break;
      case 'case.renamed':
        put('case', p.case_id, p.new_name);
        break;
      case 'source.renamed':
        put('source', p.source_id, p.new_name);
        break;
      case 'source.folder_created':
      case 'source.folder_deleted':
        put('folder', p.folder_id, p.name);
        break;
      case 'source.folder_renamed':
        put('folder', p.folder_id, p.new_name);
        break;
      default:
        if (typeof p.source_name === 'string') put('source', p.source_id, p.source_name);
    }
  }

  /** current names looked up, per kind and id (one query each); {@link forgetCurrent} after the project changed */
  private readonly current = new Map<string, string | undefined>();

  /** Forgets the current names looked up (call after changing the project). */
  forgetCurrent(): void {
    this.current.clear();
  }

  private name(kind: string, id: number, lookup: () => string | undefined): string {
    const key = `${kind}:${id}`;
    if (!this.current.has(key)) this.current.set(key, lookup());
    return this.current.get(key) ?? this.seen.get(key) ?? `${kind} ${id}`;
  }
  code(id: number): string {
    return this.name('code', id, () => this.repo.getCode(id)?.name);
  }
  category(id: number): string {
    return this.name('category', id, () => this.repo.getCategory(id)?.name);
  }
  caseName(id: number): string {
    return this.name('case', id, () => this.repo.getCase(id)?.name);
  }
  source(id: number): string {
    return this.name('source', id, () => this.repo.getSource(id)?.name);
  }
  folder(id: number): string {
    return this.name('folder', id, () => this.repo.getFolder(id)?.name);
  }
  /** "the top level" or "the category 'X'" */
  place(categoryId: unknown): string {
    return categoryId === null || categoryId === undefined ? 'the top level' : `the category '${this.category(categoryId as number)}'`;
  }
  /** "the top level" or "the folder 'X'" */
  folderPlace(folderId: unknown): string {
    return folderId === null || folderId === undefined ? 'the top level' : `the folder '${this.folder(folderId as number)}'`;
  }
}

/** A value as a sentence shows it. */
export function formatValue(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

/** A memo as a refusal shows it: shortened, or "empty". */
export function quoteMemo(memo: string | null): string {
  if (memo === null) return 'empty';
  return `'${memo.length > 40 ? `${memo.slice(0, 40)}…` : memo}'`;
}

/** One event in words, past tense ("coded 'Food security' in interview-04"). */
export function describeEvent(e: EventRecord | DomainEvent, names: Names): string {
  const p = e.payload;
  const code = () => names.code(num(p.code_id));
  const source = () => names.source(num(p.source_id));
  switch (e.event_type) {
    case 'coding.segment_coded':
      return `coded '${code()}' in ${source()}`;
    case 'coding.segment_uncoded':
      return `removed the coding '${code()}' from ${source()}`;
    case 'coding.segment_updated':
      return `changed the memo of a '${code()}' passage in ${source()}`;
    case 'coding.code_created':
      return `created the code '${str(p.name)}'`;
    case 'coding.code_deleted':
      return `deleted the code '${str(p.name)}'`;
    case 'coding.code_renamed':
      return `renamed the code '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'coding.code_updated':
      return p.field === 'color'
        ? `recoloured the code '${code()}' from ${String(p.old_value)} to ${String(p.new_value)}`
        : `changed the memo of the code '${code()}'`;
    case 'coding.code_moved':
      return `moved the code '${code()}' to ${names.place(p.new_category_id)}`;
    case 'coding.codes_merged':
      return `merged the code '${String(p.source_code_name ?? p.source_code_id)}' into '${names.code(num(p.target_code_id))}'`;
    case 'coding.category_created':
      return `created the category '${str(p.name)}'`;
    case 'coding.category_deleted':
      return `deleted the category '${str(p.name)}'`;
    case 'coding.category_renamed':
      return `renamed the category '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'coding.category_updated':
      return p.field === 'parent_id'
        ? `moved the category '${names.category(num(p.category_id))}' to ${names.place(p.new_value)}`
        : `changed the memo of the category '${names.category(num(p.category_id))}'`;
    case 'case.created':
      return `created the case '${str(p.name)}'`;
    case 'case.deleted':
      return `deleted the case '${str(p.name)}'`;
    case 'case.member_added':
      return p.segment_range === null
        ? `added ${source()} to the case '${names.caseName(num(p.case_id))}'`
        : `added a passage of ${source()} to the case '${names.caseName(num(p.case_id))}'`;
    case 'case.member_removed':
      return p.segment_range === null
        ? `took ${source()} out of the case '${names.caseName(num(p.case_id))}'`
        : `took a passage of ${source()} out of the case '${names.caseName(num(p.case_id))}'`;
    case 'case.attribute_set':
      return p.type === null
        ? `removed the attribute '${str(p.name)}' of the case '${names.caseName(num(p.case_id))}'`
        : `set the attribute '${str(p.name)}' of the case '${names.caseName(num(p.case_id))}' to ${formatValue(p.value)}`;
    case 'case.renamed':
      return `renamed the case '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'case.updated':
      return `changed the memo of the case '${names.caseName(num(p.case_id))}'`;
    case 'project.briefing_updated':
      return `changed the project briefing (${(p.changed as string[]).join(', ').replace(/_/g, ' ')})`;
    case 'case.attribute_renamed':
      return `renamed the case attribute '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'source.renamed':
      return `renamed the source ${str(p.old_name)} to ${str(p.new_name)}`;
    case 'source.moved':
      return `moved ${source()} to ${names.folderPlace(p.new_folder_id)}`;
    case 'source.updated':
      return `changed the memo of ${source()}`;
    case 'source.attribute_set':
      return p.type === null
        ? `removed the document attribute '${str(p.attribute_name)}' of ${source()}`
        : `set the document attribute '${str(p.attribute_name)}' of ${source()} to ${formatValue(p.value)}`;
    case 'source.imported':
      return `imported ${str(p.name)}`;
    case 'source.deleted':
      return `deleted the source ${str(p.name)}`;
    case 'source.folder_created':
      return `created the folder '${str(p.name)}'`;
    case 'source.folder_renamed':
      return `renamed the folder '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'source.folder_deleted':
      return `deleted the folder '${str(p.name)}'`;
    default:
      return e.event_type;
  }
}

/** Distinct items of `xs`, in order, as "'a', 'b' and 2 more". */
export function listed(xs: readonly string[], max = 3): string {
  const u = [...new Set(xs)];
  const shown = u.slice(0, max).join(', ');
  return u.length > max ? `${shown} and ${u.length - max} more` : shown;
}

/** An action in words: one event's sentence, a summary of many codings, or the first sentences of a mixed action. */
export function describeAction(events: readonly EventRecord[], names: Names): string {
  const types = new Set(events.map((e) => e.event_type));
  if (events.length > 1 && types.size === 1 && (types.has('coding.segment_coded') || types.has('coding.segment_uncoded'))) {
    const codes = listed(events.map((e) => `'${names.code(num(e.payload.code_id))}'`));
    const sources = listed(events.map((e) => names.source(num(e.payload.source_id))));
    return types.has('coding.segment_coded')
      ? `coded ${events.length} passages with ${codes} in ${sources}`
      : `removed ${events.length} codings (${codes}) from ${sources}`;
  }
  // a category deletion says itself where its codes went
  const shown = types.has('coding.category_deleted') ? events.filter((e) => e.event_type !== 'coding.code_moved') : events;
  const sentences = [...new Set(shown.map((e) => describeEvent(e, names)))];
  return sentences.length > 3 ? `${sentences.slice(0, 3).join('; ')} and ${sentences.length - 3} more changes` : sentences.join('; ');
}

/**
 * The events of one call (in sequence order) in words, past tense, as {@link undoLast} describes an action:
 * "coded 3 passages with 'Food security' in interview-04", "renamed the code 'A' to 'B'", "deleted the
 * code 'Trust'". Codes, categories, cases, sources and folders are named as the project has them now, else
 * by the last name the events carry (a deleted code's `coding.code_deleted` payload), else "code 12". Reads
 * only; for snapshot titles (src/vcs/snapshotter.ts) and Agent Activity (src/ui/activity).
 */
export function describeEvents(repo: ProjectRepository, events: readonly EventRecord[]): string {
  return describeAction(events, new Names(repo, events));
}
