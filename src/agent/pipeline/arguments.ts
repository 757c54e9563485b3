/**
 * What a call's arguments name, read without the tool's help: the sources (for the researcher's consent and
 * notices) and the codes, categories, sources and segments whose versions a held call records.
 */
import type { EntityRef } from '../../domain/ports';

/**
 * Walks a call's arguments (one mechanism for every reader of them): every key of every object, inside array
 * items too (batch operations), down to `maxDepth` levels below `input` (which is level 0). `onKey(key, value)`
 * returns true when it took the value; otherwise an object or array value is walked in turn.
 */
export function forEachArgumentKey(input: unknown, maxDepth: number, onKey: (key: string, value: unknown) => boolean): void {
  const visit = (v: unknown, depth: number) => {
    if (depth > maxDepth || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (!onKey(k, x) && typeof x === 'object') visit(x, depth + 1);
    }
  };
  visit(input, 0);
}

/** The source ids a call's arguments name: `source_id`, and `source_id` inside array items (batch operations). */
export function sourceIdsOf(input: unknown): number[] {
  const ids = new Set<number>();
  forEachArgumentKey(input, 3, (k, x) => {
    if (k !== 'source_id' || typeof x !== 'number') return false;
    ids.add(x);
    return true;
  });
  return [...ids];
}

/**
 * The codes, categories, sources and text segments a call's arguments name (the entities whose versions a
 * held call records, issue 14 item 5): `code_id`, `source_code_id`, `target_code_id` (codes), `source_id`,
 * `category_id`, `move_codes_to` and `parent_id` (categories, except for folder tools), `segment_id` (text
 * segments, except for AV tools), also inside array items (batch operations), at most 3 levels deep, each once.
 */
export function entityRefsOf(toolName: string, input: unknown): EntityRef[] {
  const refs = new Map<string, EntityRef>();
  const kindOf = (key: string): EntityRef['kind'] | undefined => {
    if (key === 'code_id' || key === 'source_code_id' || key === 'target_code_id') return 'code';
    if (key === 'source_id') return 'source';
    if (key === 'category_id' || key === 'move_codes_to') return 'category';
    if (key === 'parent_id') return toolName.includes('folder') ? undefined : 'category';
    if (key === 'segment_id') return toolName.includes('av_') ? undefined : 'segment';
    return undefined;
  };
  forEachArgumentKey(input, 3, (k, x) => {
    const kind = kindOf(k);
    if (!kind || typeof x !== 'number' || !Number.isInteger(x)) return false;
    refs.set(`${kind}:${x}`, { kind, id: x });
    return true;
  });
  return [...refs.values()];
}
