/**
 * A client for a local text-embedding endpoint with Ollama's API, the {@link EmbeddingsPort} of the similarity
 * searches. Request: `POST {endpoint}/api/embeddings` with `{"model": ..., "prompt": text}`; answer
 * `{"embedding": [numbers]}` (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embedding).
 *
 * Configured by the environment of the process (read by the composition root, src/cli/compose.ts):
 * `MARGINALIA_EMBEDDINGS_ENDPOINT` (e.g. http://127.0.0.1:11434; unset: no embeddings, the searches use their
 * lexical fallback) and `MARGINALIA_EMBEDDINGS_MODEL` (default {@link DEFAULT_EMBEDDINGS_MODEL}). The texts of
 * coded segments are sent to that endpoint: point it at a machine the research data may go to.
 */
import type { EmbeddingsPort } from '../domain/ports';

/** The model used when MARGINALIA_EMBEDDINGS_MODEL is not set (Ollama's common embedding model). */
export const DEFAULT_EMBEDDINGS_MODEL = 'nomic-embed-text';

/** Options of {@link createOllamaEmbeddings}. */
export interface OllamaEmbeddingsOptions {
  /** base URL, e.g. `http://127.0.0.1:11434` (a trailing slash is ignored) */
  endpoint: string;
  model: string;
  /** requests in flight at once (default 4) */
  concurrency?: number;
  /** time limit of one request in milliseconds (default 60,000) */
  timeoutMs?: number;
}

/**
 * An {@link EmbeddingsPort} over Ollama's `/api/embeddings`: one request per text, `concurrency` at a time.
 * `embed` rejects with an Error naming the endpoint when a request fails, times out, or answers something
 * other than a non-empty array of finite numbers of the same length for every text.
 */
export function createOllamaEmbeddings(opts: OllamaEmbeddingsOptions): EmbeddingsPort {
  const base = opts.endpoint.replace(/\/+$/, '');
  const url = `${base}/api/embeddings`;
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const timeoutMs = opts.timeoutMs ?? 60_000;

  async function one(prompt: string): Promise<number[]> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: opts.model, prompt }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw new Error(`embeddings endpoint ${url} could not be reached: ${(e as Error).message}`, { cause: e });
    }
    const body = await res.text();
    if (!res.ok) throw new Error(`embeddings endpoint ${url} answered HTTP ${res.status}: ${body.slice(0, 200)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new Error(`embeddings endpoint ${url} answered something other than JSON: ${body.slice(0, 200)}`);
    }
    const v = (parsed as { embedding?: unknown }).embedding;
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new Error(`embeddings endpoint ${url} answered without an "embedding" array of numbers (model "${opts.model}" may not be an embedding model)`);
    }
    return v as number[];
  }

  return {
    model: opts.model,
    endpoint: base,
    async embed(texts: readonly string[]): Promise<number[][]> {
      const out = new Array<number[]>(texts.length);
      let next = 0;
      const worker = async () => {
        while (next < texts.length) {
          const i = next++;
          out[i] = await one(texts[i] as string);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, texts.length) }, worker));
      const dims = out[0]?.length;
      if (out.some((v) => v.length !== dims)) throw new Error(`embeddings endpoint ${url} answered vectors of different lengths`);
      return out;
    },
  };
}

/**
 * The embeddings port the environment configures: MARGINALIA_EMBEDDINGS_ENDPOINT (an http or https URL) and
 * MARGINALIA_EMBEDDINGS_MODEL; null when the endpoint is unset or empty. Throws an Error for an endpoint
 * that is not an http(s) URL (a configuration mistake should not silently turn semantic search lexical).
 */
export function embeddingsFromEnv(env: NodeJS.ProcessEnv): EmbeddingsPort | null {
  const endpoint = env.MARGINALIA_EMBEDDINGS_ENDPOINT?.trim();
  if (!endpoint) return null;
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw new Error(`MARGINALIA_EMBEDDINGS_ENDPOINT is not a URL: ${endpoint}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`MARGINALIA_EMBEDDINGS_ENDPOINT must be an http or https URL: ${endpoint}`);
  return createOllamaEmbeddings({ endpoint, model: env.MARGINALIA_EMBEDDINGS_MODEL?.trim() || DEFAULT_EMBEDDINGS_MODEL });
}
