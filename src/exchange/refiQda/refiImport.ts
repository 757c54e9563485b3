import { ToolError } from '../../core/errors';
import type { Importer } from '../importers/plan';

/** REFI-QDA import (`.qdpx`, `.qde`, `.qdc`): work in progress. */
export const refiQdaImporter: Importer = {
  format: 'refi_qda',
  description: 'REFI-QDA project (.qdpx zip or bare .qde) or codebook (.qdc), as NVivo, ATLAS.ti, MAXQDA and QualCoder export them',
  plan: () => Promise.reject(new ToolError('IMPORT_FAILED', 'refi_qda import is not ready yet')),
};
