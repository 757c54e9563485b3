import { z } from 'zod';
import { TOOLS } from './registry';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.anyOf) return [...new Set(s.anyOf.map(typeOf))].join(' \\| ');
  if (s.type === 'array') return `${s.items ? typeOf(s.items) : 'any'}[]`;
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  return s.type ?? 'any';
}

function describe(s: JsonSchema): string | undefined {
  return s.description ?? s.anyOf?.find((a) => a.description)?.description;
}

/**
 * The tool reference as Markdown, generated from the registry: for each tool its group, effect, trust
 * category, description and a parameter table from its JSON Schema. Written to docs/tools.md by
 * scripts/genToolDocs.ts; a unit test fails when the file drifts.
 */
export function renderToolDocs(): string {
  const lines: string[] = [
    '# Tool reference',
    '',
    '<!-- Generated from src/tools/registry.ts by `npm run gen:docs`; do not edit by hand. -->',
    '',
    `Every tool is called with \`POST /tools/{name}\` and the body \`{"arguments": {...}}\`. Positions count Unicode code points; end positions are exclusive. ${TOOLS.length} tools.`,
    '',
  ];
  let group = '';
  for (const t of TOOLS) {
    if (t.group !== group) {
      group = t.group;
      lines.push(`## ${group}`, '');
    }
    const schema = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    lines.push(`### \`${t.name}\` — ${t.title}`, '', `effect: \`${t.effect}\` · trust category: \`${t.trust}\``, '', t.description, '');
    const props = Object.entries(schema.properties ?? {});
    if (props.length === 0) lines.push('No parameters.', '');
    else {
      lines.push('| parameter | type | required | description |', '|---|---|---|---|');
      for (const [name, p] of props) {
        const item = p.type === 'array' && p.items?.properties ? ` (items: ${Object.keys(p.items.properties).join(', ')})` : '';
        lines.push(`| \`${name}\` | ${typeOf(p)} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${(describe(p) ?? '').replace(/\|/g, '\\|')}${item} |`);
      }
      lines.push('');
    }
  }
  return `${lines.join('\n')}\n`;
}
