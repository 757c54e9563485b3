import { z } from 'zod';
import { DEFAULT_CONFIDENCE } from '../domain/suggestions';
import { text } from './schemas';

/**
 * Input pieces every suggestion tool shares (src/tools/suggestionTools.ts, rankedSuggestionTools.ts):
 * a suggester's confidence, 0 to 100, and a rationale of at most 100,000 code points.
 */
export const confidence = z.number().min(0).max(100).describe(`how sure the suggester is, 0 to 100 (default ${DEFAULT_CONFIDENCE})`);

/** Why the suggester proposes it: free text, at most 100,000 code points. */
export const rationale = text(100_000);
