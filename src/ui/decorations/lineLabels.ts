import * as vscode from 'vscode';
import { compactLabels, type LineLabel } from './codingLayout';

/** What the labels of one line drew (for tests: {@link DrawnLineLabels}). */
export interface DrawnLineLabels {
  /** the labels shown by name, with the text drawn */
  shown: { label: LineLabel; text: string }[];
  /** the "+N" chip: how many codes it stands for and all the line's code names (its hover), or null when every code is named */
  more: { count: number; names: string[] } | null;
}

/**
 * The hover of a "+N" chip: every code on the line, one per line, in the order the labels use. Names are
 * appended as text (never as Markdown or HTML: agents name codes), so the hover is plain and untrusted.
 */
export function moreLabelsHover(labels: readonly LineLabel[]): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${labels.length} codes on this line**\n\n`);
  labels.forEach((l, i) => {
    if (i > 0) md.appendMarkdown('  \n');
    md.appendText(`\u25A0 ${l.name}`);
  });
  return md;
}

/**
 * The decorations of one coded line's labels, injected after `at` (the line's end): each shown label as its name
 * on its code's colour (`labels`), and, when the line has more codes than are named ({@link compactLabels}), a
 * "+N" chip in the theme's badge colours whose hover lists every code of the line (`more`: painted with a
 * decoration type of its own, made after the labels' one; in one type VS Code put the chip with a hover first).
 * Names keep their spaces unbroken.
 */
export function lineLabelDecorations(
  at: vscode.Range,
  labels: readonly LineLabel[],
): { labels: vscode.DecorationOptions[]; more: vscode.DecorationOptions[]; drawn: DrawnLineLabels } {
  const { shown, more } = compactLabels(labels);
  const chip = (i: number) => (i === 0 ? '0 0 0 1.5em' : '0 0 0 0.4em');
  // injected texts at one position keep the order given here
  const named: vscode.DecorationOptions[] = shown.map(({ label, text }, i) => ({
    range: at,
    renderOptions: {
      after: {
        contentText: `\u00a0${text.replace(/ /g, '\u00a0')}\u00a0`,
        color: label.textColor,
        backgroundColor: label.color,
        margin: chip(i),
        fontStyle: 'normal',
        fontWeight: 'normal',
      },
    },
  }));
  const chips: vscode.DecorationOptions[] = [];
  if (more.length > 0) {
    chips.push({
      range: at,
      hoverMessage: moreLabelsHover(labels),
      renderOptions: {
        after: {
          contentText: `\u00a0+${more.length}\u00a0`,
          color: new vscode.ThemeColor('badge.foreground'),
          backgroundColor: new vscode.ThemeColor('badge.background'),
          margin: chip(shown.length),
          fontStyle: 'normal',
          fontWeight: 'bold',
        },
      },
    });
  }
  return { labels: named, more: chips, drawn: { shown, more: more.length > 0 ? { count: more.length, names: labels.map((l) => l.name) } : null } };
}
