import { listCaseAttributeDefinitions } from '../../domain/cases';
import type { ProjectRepository } from '../../domain/ports';
import type { CaseAttributesModel, CaseAttributeRow } from '../../protocol/caseAttributes';

/**
 * The Case Attributes table's data (issue 13 item 5), read from the open project: columns are the attribute
 * definitions by name with their type and how many cases have a value (as list_case_attributes returns them),
 * rows are the cases by name (case-insensitive, as list_cases orders them) with their typed values. Free of
 * `vscode`; the integration test reads it as the webview receives it.
 */
export function caseAttributesModel(repo: ProjectRepository): CaseAttributesModel {
  const defs = listCaseAttributeDefinitions({ repo });
  const rows = new Map<number, CaseAttributeRow>(repo.listCases().map((c) => [c.case_id, { case_id: c.case_id, name: c.name, values: {} }]));
  for (const a of repo.listCaseAttributes()) {
    const row = rows.get(a.case_id);
    if (row) row.values[a.name] = { type: a.type, value: a.value };
  }
  return { columns: defs.map((d) => ({ name: d.name, type: d.type, case_count: d.case_count })), rows: [...rows.values()] };
}
