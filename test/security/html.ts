/**
 * Inspecting HTML for injected markup: parses a document with parse5 (the HTML standard's parser, as a
 * browser parses it) and lists what could run or load: script elements, inline event handlers, `javascript:`
 * URLs, embedded frames and objects, meta refreshes, base elements, forms; plus the page's
 * Content-Security-Policy and its text.
 */
import { parse } from 'parse5';

/** The strings agents and foreign files may put into names, memos and texts. */
export const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=2">',
  '"><svg onload="window.__pwned=3">',
  "' onmouseover='window.__pwned=4' x='",
  '</title></style></textarea><script>window.__pwned=5</script>',
  '<a href="javascript:window.__pwned=6">click</a>',
  '<iframe src="https://evil.example/"></iframe>',
  '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
  '<base href="https://evil.example/">',
  '<form action="https://evil.example/"><button>go</button></form>',
  '<style>body{display:none}</style>',
  '<!-- comment --><![CDATA[ x ]]>',
  '&lt;script&gt;already escaped&lt;/script&gt;',
  '{{constructor.constructor("window.__pwned=7")()}}',
  '\u2028\u2029<script>window.__pwned=8</script>',
];

interface Node {
  nodeName: string;
  tagName?: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
  content?: Node;
  value?: string;
  data?: string;
}

/** What a parsed document holds that matters for injection. */
export interface HtmlReport {
  scripts: { src: string | null; nonce: string | null; inline: string }[];
  /** `element.attribute` of every on* attribute */
  handlers: string[];
  /** attributes holding a `javascript:` (or `vbscript:`, `data:text/html`) URL */
  scriptUrls: string[];
  /** elements that load or navigate: iframe, frame, object, embed, base, form, meta refresh, link, img, svg, video, audio */
  active: string[];
  /** style elements (their count: an injected one would be one more) */
  styles: number;
  /** the CSP meta contents */
  csp: string[];
  /** the document's text (what a reader sees, text nodes joined) */
  text: string;
  /** attribute values joined (titles and such, where escaped names may also show) */
  attributeText: string;
}

const ACTIVE = new Set([
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'base',
  'form',
  'link',
  'img',
  'svg',
  'math',
  'video',
  'audio',
  'source',
  'portal',
  'applet',
]);

/** Parses `html` and reports what it holds (see {@link HtmlReport}). */
export function inspectHtml(html: string): HtmlReport {
  const doc = parse(html) as unknown as Node;
  const out: HtmlReport = { scripts: [], handlers: [], scriptUrls: [], active: [], styles: 0, csp: [], text: '', attributeText: '' };
  const texts: string[] = [];
  const attrTexts: string[] = [];
  const visit = (n: Node) => {
    const tag = n.tagName;
    if (tag) {
      const attr = (name: string) => n.attrs?.find((a) => a.name === name)?.value ?? null;
      for (const a of n.attrs ?? []) {
        attrTexts.push(a.value);
        if (/^on/i.test(a.name)) out.handlers.push(`${tag}.${a.name}`);
        if (/^\s*(javascript|vbscript):|^\s*data:text\/html/i.test(a.value)) out.scriptUrls.push(`${tag}.${a.name}=${a.value}`);
      }
      if (tag === 'script') {
        const inline = (n.childNodes ?? []).map((c) => c.value ?? '').join('');
        out.scripts.push({ src: attr('src'), nonce: attr('nonce'), inline });
      }
      if (tag === 'style') out.styles++;
      if (ACTIVE.has(tag)) out.active.push(tag);
      if (tag === 'meta') {
        const equiv = (attr('http-equiv') ?? '').toLowerCase();
        if (equiv === 'content-security-policy') out.csp.push(attr('content') ?? '');
        if (equiv === 'refresh') out.active.push('meta refresh');
      }
    } else if (n.nodeName === '#text') texts.push(n.value ?? '');
    for (const c of n.childNodes ?? []) visit(c);
    if (n.content) visit(n.content);
  };
  visit(doc);
  out.text = texts.join('');
  out.attributeText = attrTexts.join('\n');
  return out;
}

/** The directives of a CSP as a map from name to its source list. */
export function cspDirectives(csp: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) m.set(name.toLowerCase(), values);
  }
  return m;
}
