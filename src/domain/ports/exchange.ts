/**
 * What a stored exchange GUID names: `user` (local id: the coder's name), `category`, `code`, `source`, `case`
 * (local id: the item's id), `selection` / `coding` (a text segment's REFI selection and coding), `av_selection`
 * / `av_coding` (an AV segment's), `case_selection` (a case range), `variable` (local id: the attribute name),
 * `note` (local id: `<kind>:<id>` of the item whose memo it is).
 */
export type ExchangeGuidKind =
  'user' | 'category' | 'code' | 'source' | 'case' | 'selection' | 'coding' | 'av_selection' | 'av_coding' | 'case_selection' | 'variable' | 'note';

/** A GUID a REFI-QDA file gave to an item (table `exchange_guids`): lower case, no braces. */
export interface ExchangeGuid {
  kind: ExchangeGuidKind;
  local_id: string;
  guid: string;
}

/**
 * The GUIDs REFI-QDA exchange (src/exchange/refiQda, src/domain/exchangeIds.ts) gives items: the project's own,
 * those imported files gave (table `exchange_guids`) and every entity's own `guid` column (src/vcs/identity.ts).
 * An export prefers a stored exchange GUID, then the entity's own, then one derived from the project GUID, so a
 * copy of the project exports the GUIDs the original did.
 */
export interface ExchangeRepository {
  /**
   * The project's own GUID: 32 lower-case hex digits (meta `project_guid`), the namespace of derived item GUIDs.
   * Throws (a plain Error) when the project has none, which only a schema older than the store's can.
   */
  projectGuid(): string;
  /** The stored exchange GUIDs, all (by kind, then local id) or of one kind (by local id). */
  listExchangeGuids(kind?: ExchangeGuidKind): ExchangeGuid[];
  /** Stores (or replaces) the exchange GUID of an item. Runs inside the caller's transaction. */
  setExchangeGuid(kind: ExchangeGuidKind, localId: string, guid: string): void;
  /**
   * Every entity's own GUID as exchange kinds: code, category, source, case, coding (a text segment), av_coding,
   * case_selection (local id: the row id).
   */
  listEntityGuids(): ExchangeGuid[];
}
