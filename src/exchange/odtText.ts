/**
 * Plain text of an OpenDocument text document (`.odt`, OASIS OpenDocument 1.3): `content.xml` read with `jszip`
 * + `fast-xml-parser`, paragraphs in document order. Used by textExtraction.ts (source import).
 */
import JSZip from 'jszip';
import { XMLParser } from 'fast-xml-parser';
import { ToolError } from '../core/errors';

/** A node of fast-xml-parser's `preserveOrder` output: `{ tag: children, ':@'?: attributes }` or `{ '#text' }`. */
type XmlNode = Record<string, unknown>;

/** Elements inside a paragraph whose content is not part of the running text (notes, comments, shapes). */
const ODT_SKIP_IN_PARAGRAPH = new Set([
  'office:annotation',
  'office:annotation-end',
  'text:note',
  'text:ruby-text',
  'draw:frame',
  'draw:custom-shape',
  'draw:a',
  'draw:g',
  'text:tracked-changes',
]);

/** Elements outside paragraphs whose descendants are not body text (deleted changes, declarations, forms). */
const ODT_SKIP_IN_BODY = new Set([
  'text:tracked-changes',
  'text:sequence-decls',
  'text:variable-decls',
  'text:user-field-decls',
  'office:forms',
  'office:annotation',
]);

/**
 * Text of an OpenDocument text document (OASIS OpenDocument 1.3, part 3, section 6: "Paragraph Elements
 * Content"): every `text:p` and `text:h` under `office:body/office:text`, in document order (lists, tables and
 * sections included), joined with `"\n"`.
 *
 * Inside a paragraph: `text:s` gives `text:c` spaces (default 1), `text:tab` a tab, `text:line-break` a `"\n"`;
 * spans, links and other inline elements contribute their text. Literal white space follows section 6.1.2:
 * TAB/CR/LF/SPACE count as a space, a space after white space or at the start of the paragraph is dropped
 * (a `text:s`, `text:tab` or `text:line-break` ends a white-space run, as LibreOffice reads it).
 * Notes, annotations and drawing frames inside a paragraph are left out.
 *
 * @throws Error (from jszip) when the bytes are not a ZIP; ToolError `SOURCE_IMPORT_FAILED` when the archive
 *   has no `content.xml` or it has no `office:text` body.
 */
export async function odtText(bytes: Uint8Array): Promise<string> {
  const zip = await JSZip.loadAsync(bytes);
  const entry = zip.file('content.xml');
  if (!entry) throw new ToolError('SOURCE_IMPORT_FAILED', 'not an OpenDocument text file (no content.xml).');
  const xml = await entry.async('string');
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    trimValues: false,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: true,
    // Needed for numeric character references (&#233;); XML's five named entities are decoded either way.
    htmlEntities: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
  });
  const doc = parser.parse(xml) as XmlNode[];
  const body = findElement(doc, 'office:document-content', 'office:body', 'office:text');
  if (!body) throw new ToolError('SOURCE_IMPORT_FAILED', 'not an OpenDocument text file (no office:text in content.xml).');
  const paragraphs: string[] = [];
  collectParagraphs(body, paragraphs);
  return paragraphs.join('\n');
}

/** Tag name of a preserve-order node (`'#text'` for text nodes), or undefined. */
function tagOf(node: XmlNode): string | undefined {
  for (const k of Object.keys(node)) if (k !== ':@') return k;
  return undefined;
}

/** Children of a preserve-order element node. */
function childrenOf(node: XmlNode, tag: string): XmlNode[] {
  const c = node[tag];
  return Array.isArray(c) ? (c as XmlNode[]) : [];
}

/** Follows a path of element names from a list of nodes; returns the last element's children. */
function findElement(nodes: XmlNode[], ...names: string[]): XmlNode[] | undefined {
  let current = nodes;
  for (const name of names) {
    const next = current.find((n) => tagOf(n) === name);
    if (!next) return undefined;
    current = childrenOf(next, name);
  }
  return current;
}

/** Walks body-level content; each `text:p`/`text:h` found becomes one entry of `out`. */
function collectParagraphs(nodes: XmlNode[], out: string[]): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (!tag || tag === '#text' || ODT_SKIP_IN_BODY.has(tag)) continue;
    if (tag === 'text:p' || tag === 'text:h') {
      const state = { text: '', ignoreSpace: true };
      paragraphText(childrenOf(node, tag), state);
      out.push(state.text);
    } else {
      collectParagraphs(childrenOf(node, tag), out);
    }
  }
}

/** Appends the text of paragraph content to `state.text` (white-space rules in {@link odtText}). */
function paragraphText(nodes: XmlNode[], state: { text: string; ignoreSpace: boolean }): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (!tag) continue;
    if (tag === '#text') {
      const raw = String(node['#text'] ?? '');
      for (const ch of raw) {
        if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
          if (!state.ignoreSpace) {
            state.text += ' ';
            state.ignoreSpace = true;
          }
        } else {
          state.text += ch;
          state.ignoreSpace = false;
        }
      }
    } else if (tag === 'text:s') {
      const attrs = (node[':@'] ?? {}) as Record<string, unknown>;
      const c = Number.parseInt(String(attrs['text:c'] ?? '1'), 10);
      state.text += ' '.repeat(Number.isFinite(c) && c > 0 ? Math.min(c, 100_000) : 1);
      state.ignoreSpace = false;
    } else if (tag === 'text:tab') {
      state.text += '\t';
      state.ignoreSpace = false;
    } else if (tag === 'text:line-break') {
      state.text += '\n';
      state.ignoreSpace = false;
    } else if (!ODT_SKIP_IN_PARAGRAPH.has(tag)) {
      paragraphText(childrenOf(node, tag), state);
    }
  }
}
