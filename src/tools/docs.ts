import { z } from 'zod';
import { TOOLS } from './registry';
import { requiredAliasPairs } from './schemas';

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
  minLength?: number;
  maxLength?: number;
  not?: unknown;
}

/**
 * Whether parameter `name` is required: "yes" when the schema's `required` lists it, "one of a, b" when an
 * alias requirement (src/tools/schemas.ts `aliasRequirement`: a parameter and its alias) names it, else "no".
 */
function requiredCell(schema: JsonSchema, name: string): string {
  if (schema.required?.includes(name)) return 'yes';
  const names = requiredAliasPairs(schema).find((pair) => pair.includes(name));
  return names ? `one of ${names.map((n) => `\`${n}\``).join(', ')}` : 'no';
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.anyOf) return [...new Set(s.anyOf.map(typeOf))].join(' \\| ');
  if (s.type === 'array') return `${s.items ? typeOf(s.items) : 'any'}[]`;
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  // the length limits the server enforces (code points), so the reference says them too
  if (s.type === 'string' && (s.minLength !== undefined || s.maxLength !== undefined)) return `string (${s.minLength ?? 0}-${s.maxLength ?? '∞'} characters)`;
  return s.type ?? 'any';
}

function describe(s: JsonSchema): string | undefined {
  return s.description ?? s.anyOf?.find((a) => a.description)?.description;
}

/**
 * The tool reference as Markdown, generated from the registry: for each tool its group, effect, trust
 * category, description and a parameter table from its JSON Schema. Written to docs/reference/tools.md by
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
        lines.push(`| \`${name}\` | ${typeOf(p)} | ${requiredCell(schema, name)} | ${(describe(p) ?? '').replace(/\|/g, '\\|')}${item} |`);
      }
      lines.push('');
    }
  }
  return `${lines.join('\n')}\n`;
}
