import { deriveGuid } from '../../../domain/exchangeIds';
import type { DomainContext } from '../../../domain/events';
import type { ExchangeGuidKind, ProjectRepository } from '../../../domain/ports';

type Ctx = DomainContext<ProjectRepository>;

/** The existing items of one kind, as {@link GuidIndex.find} asks about them. */
export interface ExistingItems {
  /** whether an item of this id exists */
  has: (id: number) => boolean;
  /** the ids of every existing item (asked once per kind, for the derived GUIDs) */
  ids: () => number[];
}

/**
 * Finds existing items by exchange GUID (REFI-QDA's): GUIDs stored by earlier imports (table exchange_guids),
 * then the entities' own GUIDs (migration 17: what a copy of this project exports), then those derived from the project's own GUID (a Marginalia export imported back; src/domain/exchangeIds.ts),
 * and stores the GUIDs of what an import writes. Reads the stored GUIDs only when first asked about a GUID, so a
 * plan without GUIDs costs nothing.
 */
export class GuidIndex {
  /** kind -> guid -> local id, from exchange_guids (kept up to date by {@link keep}) */
  private stored: Map<string, Map<string, string>> | null = null;
  /** kind -> local ids that have a stored GUID */
  private readonly hasStored = new Map<string, Set<string>>();
  /** kind -> derived guid -> id, of the items that existed when the kind was first looked up */
  private readonly derived = new Map<string, Map<string, number>>();
  /** kind -> entity guid (migration 17; shared by every copy of the project) -> id, read when first needed */
  private entity: Map<string, Map<string, number>> | null = null;
  private projectGuidCache: string | null = null;
  constructor(private readonly ctx: Ctx) {}

  private get projectGuid(): string {
    return (this.projectGuidCache ??= this.ctx.repo.projectGuid());
  }

  private load(): Map<string, Map<string, string>> {
    if (this.stored === null) {
      this.stored = new Map();
      for (const g of this.ctx.repo.listExchangeGuids()) this.remember(g.kind, g.local_id, g.guid);
    }
    return this.stored;
  }

  private remember(kind: string, localId: string, guid: string): void {
    const stored = this.load();
    let m = stored.get(kind);
    if (!m) stored.set(kind, (m = new Map()));
    if (!m.has(guid)) m.set(guid, localId);
    let ids = this.hasStored.get(kind);
    if (!ids) this.hasStored.set(kind, (ids = new Set()));
    ids.add(localId);
  }

  /** The id of the existing item of `kind` named by `guid`, or undefined (always for a null or absent GUID). */
  find(kind: ExchangeGuidKind, guid: string | null | undefined, items: ExistingItems): number | undefined {
    if (!guid) return undefined;
    const stored = this.load().get(kind)?.get(guid);
    if (stored !== undefined && items.has(Number(stored))) return Number(stored);
    if (this.entity === null) {
      this.entity = new Map();
      for (const g of this.ctx.repo.listEntityGuids()) {
        let m = this.entity.get(g.kind);
        if (!m) this.entity.set(g.kind, (m = new Map()));
        m.set(g.guid, Number(g.local_id));
      }
    }
    const own = this.entity.get(kind)?.get(guid);
    if (own !== undefined && items.has(own)) return own;
    let d = this.derived.get(kind);
    if (!d) {
      d = new Map(items.ids().map((id) => [deriveGuid(this.projectGuid, kind, id), id]));
      this.derived.set(kind, d);
    }
    const id = d.get(guid);
    return id !== undefined && items.has(id) ? id : undefined;
  }

  /**
   * Stores `guid` for `(kind, localId)`: always for what the import created (`created`), else only when the item
   * has no stored GUID yet; never when it equals the item's derived GUID (that one needs no storing), nor for a
   * null or absent GUID.
   */
  keep(kind: ExchangeGuidKind, localId: string | number, guid: string | null | undefined, created: boolean): void {
    if (!guid) return;
    const key = String(localId);
    this.load();
    if (!created && this.hasStored.get(kind)?.has(key)) return;
    if (deriveGuid(this.projectGuid, kind, key) === guid) return;
    this.ctx.repo.setExchangeGuid(kind, key, guid);
    this.remember(kind, key, guid);
  }
}
