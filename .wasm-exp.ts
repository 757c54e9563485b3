import * as fs from 'node:fs';
import { createPipeline, headlessHost, openProjectHandle } from './src/cli/compose';
import { silentLogger } from './src/core/log';
async function main() {
  const file = '/tmp/prof/big.qda';
  fs.copyFileSync(process.argv[2]!, file);
  const h = await openProjectHandle(file, { checkpointIdleMs: 0, logger: silentLogger });
  const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger });
  const me = { session_id: 'local', client_type: 'LOCAL_UI' as const, client_name: 'x', user: 'x', researcher: true };
  const ext = (label: string) => { (global as any).gc(); const m = process.memoryUsage(); console.log(label.padEnd(28), 'ext-ab', ((m.external - m.arrayBuffers) / 1e6).toFixed(1), 'ab', (m.arrayBuffers / 1e6).toFixed(1), 'rss', (m.rss / 1e6).toFixed(0)); };
  ext('open');
  const src = (h.store.all<any>('SELECT id FROM sources LIMIT 1')[0]).id;
  const code = (h.store.all<any>('SELECT id FROM codes LIMIT 1')[0]).id;
  const calls: [string, any][] = [['list_codes', {}], ['get_code', { code_id: code }], ['read_source_content', { source_id: src, start_pos: 0, max_length: 400 }], ['list_segments', { source_id: src, limit: 20, offset: 10 }], ['search_text', { query: 'water', limit: 5 }], ['get_project_context', {}], ['apply_code', { code_id: code, source_id: src, start_pos: 5, end_pos: 50 }], ['update_memo', { source_id: src, memo: 'x' }], ['create_code', { name: 'zz new', color: '#112233' }]];
  for (const [t, a] of calls) { for (let i = 0; i < 5; i++) await p.invoke(t, a, me); ext(t); }
  h.store.checkpoint(); ext('checkpoint');
  await h.close();
}
void main();
