import * as vscode from 'vscode';
import { compactLabels, type LineLabel } from './codingLayout';

/** What the labels of one line drew (for tests: {@link DrawnLineLabels}). */
export interface DrawnLineLabels {
  /** the labels shown by name, with the text drawn */
  shown: { label: LineLabel; text: string }[];
  /** the "+N" chip: how many codes it stands for and all the line's code names (its hover), or null when every code is named */
  more: { count: number; names: string[] } | null;
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The hover of a "+N" chip: every code on the line, each name on its code's colour (as the labels show them),
 * one per line. HTML spans with `color` and `background-color` are what VS Code's hover sanitiser keeps.
 */
export function moreLabelsHover(labels: readonly LineLabel[]): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  md.supportHtml = true;
  md.appendMarkdown(`**${labels.length} codes on this line**\n\n`);
  for (const l of labels) {
    md.appendMarkdown(`<span style="color:${l.textColor};background-color:${l.color};">&nbsp;${escapeHtml(l.name)}&nbsp;</span><br>\n`);
  }
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
