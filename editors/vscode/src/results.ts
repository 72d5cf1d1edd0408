// Reading loci's command results (`{envelope..., "markdown": "..."}`) and diagnostics into
// what the editor shows: impact locations, `path:line` targets, the stale count and the
// status-bar text. Pure (no `vscode` import), so `node --test` covers it.

/** One dependent from an impact envelope, ready for a quick pick. */
export interface ImpactLocation {
  /** The node id (a file path or a symbol key). */
  label: string;
  /** `depth 1 · import · stated 1.00`. */
  description: string;
  /** The repo-relative file to open. */
  path: string;
  /** Zero-based line to reveal (from `via.at`, one-based there). */
  line: number;
}

interface ImpactNode {
  id?: unknown;
  path?: unknown;
  depth?: unknown;
  via?: { kind?: unknown; at?: unknown; provenance?: unknown; confidence?: unknown };
}

/** Splits `path:line` (one-based line) at its last colon; a missing or bad line is 1. */
export function splitAt(at: string): { path: string; line: number } {
  const i = at.lastIndexOf(':');
  if (i > 0) {
    const n = Number(at.slice(i + 1));
    if (Number.isInteger(n) && n >= 1) {
      return { path: at.slice(0, i), line: n };
    }
  }
  return { path: at, line: 1 };
}

/** The dependents of an impact result, in the server's order (by depth, then id). */
export function impactLocations(result: unknown): ImpactLocation[] {
  const nodes = (result as { result?: { nodes?: unknown } } | undefined)?.result?.nodes;
  if (!Array.isArray(nodes)) {
    return [];
  }
  const out: ImpactLocation[] = [];
  for (const raw of nodes as ImpactNode[]) {
    const id = typeof raw.id === 'string' ? raw.id : undefined;
    const nodePath = typeof raw.path === 'string' ? raw.path : undefined;
    if (id === undefined || nodePath === undefined) {
      continue;
    }
    const at = typeof raw.via?.at === 'string' ? splitAt(raw.via.at) : undefined;
    // `via.at` is where the edge is written; it is in the dependent's own file.
    const line = at !== undefined && at.path === nodePath ? at.line : 1;
    const parts = [`depth ${String(raw.depth)}`];
    if (typeof raw.via?.kind === 'string') {
      parts.push(raw.via.kind);
    }
    if (typeof raw.via?.provenance === 'string') {
      const c = typeof raw.via.confidence === 'number' ? ` ${raw.via.confidence.toFixed(2)}` : '';
      parts.push(raw.via.provenance + c);
    }
    out.push({ label: id, description: parts.join(' · '), path: nodePath, line: line - 1 });
  }
  return out;
}

/** The `markdown` field of a command result, or a fallback naming the command. */
export function markdownOf(result: unknown, command: string): string {
  const md = (result as { markdown?: unknown } | null | undefined)?.markdown;
  return typeof md === 'string' ? md : `${command} returned no markdown.`;
}

/** A repo-relative, `/`-separated path of `file` under `root`, or undefined outside it. */
export function relativePath(root: string, file: string, sep: string): string | undefined {
  const r = root.endsWith(sep) ? root : root + sep;
  if (!file.startsWith(r)) {
    return undefined;
  }
  return file.slice(r.length).split(sep).join('/');
}

/** `path:line` for `loci.why` (one-based line from the editor's zero-based one). */
export function whyTarget(relative: string, zeroBasedLine: number): string {
  return `${relative}:${zeroBasedLine + 1}`;
}

/** The subset of a diagnostic this module reads. */
export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number };
}

/** True for loci's stale-memory diagnostics (source `loci`, code `stale…`). */
export function isStale(d: DiagnosticLike): boolean {
  if (d.source !== 'loci') {
    return false;
  }
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  return typeof code === 'string' && code.startsWith('stale');
}

/** How many stale-memory diagnostics there are in total. */
export function staleCount(all: Iterable<readonly DiagnosticLike[]>): number {
  let n = 0;
  for (const list of all) {
    for (const d of list) {
      if (isStale(d)) {
        n += 1;
      }
    }
  }
  return n;
}

/** What the status bar knows. */
export interface StatusState {
  /** `running`, `starting`, `stopped`, or `missing` (no server binary). */
  server: 'running' | 'starting' | 'stopped' | 'missing';
  /** The server's work in progress (a scan, embedding, writing pages): its `$/progress`
   * title (`loci: writing pages`; a scan when absent), message (`120/500 files`) and
   * percentage, or undefined. */
  scan?: { title?: string; message?: string; percentage?: number };
  /** Stale-memory diagnostics in open documents. */
  stale: number;
}

/** The status bar's text (with codicons) and tooltip. */
export function statusText(s: StatusState): { text: string; tooltip: string } {
  if (s.server === 'missing') {
    return { text: '$(error) loci', tooltip: 'loci: the language server was not found (click for details)' };
  }
  if (s.server === 'stopped') {
    return { text: '$(circle-slash) loci', tooltip: 'loci: the language server is stopped (click to restart)' };
  }
  if (s.server === 'starting') {
    return { text: '$(sync~spin) loci', tooltip: 'loci: starting the language server' };
  }
  const parts: string[] = [];
  if (s.scan !== undefined) {
    const pct = s.scan.percentage !== undefined ? ` ${s.scan.percentage}%` : '';
    parts.push(`$(sync~spin) ${s.scan.title ?? 'loci: scanning'}${pct}`);
  } else {
    parts.push('$(book) loci');
  }
  if (s.stale > 0) {
    parts.push(`$(warning) ${s.stale} stale`);
  }
  const tooltip = [
    s.scan !== undefined
      ? `${(s.scan.title ?? 'loci: scanning').replace(/^loci: /, '')}${s.scan.message ? ': ' + s.scan.message : ''}`
      : 'map up to date',
    s.stale === 1 ? '1 stale memory in open files' : `${s.stale} stale memories in open files`,
  ].join('\n');
  return { text: parts.join(' '), tooltip: 'loci: ' + tooltip };
}

/** `$/loci/pagesBehind` (server/lsp/src/server/mod.rs `PagesBehindParams`): sent by the server
 * after every sync (it syncs on its own when a commit moves `HEAD`), after a synthesis run,
 * and at start when pages are behind the code. */
export interface PagesBehindParams {
  /** The workspace root's `file://` URI. */
  root: string;
  /** The commit `HEAD` is at, or null outside git. */
  head: string | null;
  /** How many pages are behind the code. */
  count: number;
  /** Their subjects: stale pages, then folders to roll up. */
  pages: string[];
  /** "3 pages behind the code". */
  message: string;
}

/** The latest count per workspace root, from `$/loci/pagesBehind`. */
export function recordBehind(behind: Map<string, PagesBehindParams>, p: PagesBehindParams): void {
  if (p.count > 0) {
    behind.set(p.root, p);
  } else {
    behind.delete(p.root);
  }
}

/** The second status bar item: "loci: 3 pages behind", clicked to draft them (`Loci: Draft
 * Pages`); undefined (hidden) when no page is behind the code. The tooltip names the pages
 * (the first 10) and the commit. */
export function behindText(
  behind: Iterable<PagesBehindParams>,
): { text: string; tooltip: string } | undefined {
  let count = 0;
  const pages: string[] = [];
  const heads = new Set<string>();
  for (const b of behind) {
    count += b.count;
    pages.push(...b.pages);
    if (b.head) {
      heads.add(b.head.slice(0, 12));
    }
  }
  if (count === 0) {
    return undefined;
  }
  const shown = pages.slice(0, 10).map((p) => `- ${p}`);
  if (pages.length > shown.length) {
    shown.push(`- … and ${pages.length - shown.length} more`);
  }
  const at = heads.size > 0 ? ` at ${[...heads].join(', ')}` : '';
  return {
    text: `$(history) loci: ${count} ${count === 1 ? 'page' : 'pages'} behind`,
    tooltip: [
      `loci: ${count === 1 ? '1 page' : `${count} pages`} behind the code${at}:`,
      ...shown,
      'Click to draft them with the configured model (Loci: Draft Pages with the Configured Model).',
    ].join('\n'),
  };
}

/** How the extension shows a server command's answer, whoever ran it (a palette command,
 * a code action, a code lens): `preview` for the reading commands (their markdown in a
 * locked preview beside the code), `message` for writes (their first line as a
 * notification), `none` for the rest. */
export function resultView(command: string): 'preview' | 'message' | 'none' {
  switch (command) {
    case 'loci.why':
    case 'loci.impact':
    case 'loci.context':
    case 'loci.recap':
    case 'loci.sync':
    case 'loci.synthesize':
      return 'preview';
    case 'loci.remember':
    case 'loci.decide':
    case 'loci.learn':
    case 'loci.confirm':
    case 'loci.resolve':
    case 'loci.scan':
      return 'message';
    default:
      return 'none';
  }
}

/** The command that opens a result's preview: a *locked* preview, to the side. A plain
 * preview follows the active markdown editor, so the answer was replaced as soon as a
 * markdown file was opened (issue 33, item 7). */
export const PREVIEW_COMMAND = 'markdown.showLockedPreviewToSide';

/** The server's error codes (server/lsp/src/commands.rs). */
export const NOT_FOUND = 1001;
export const NOT_AVAILABLE = 1002;
export const NO_WORKSPACE = 1003;

/** The message to show for a failed command: the server's own words, which already name
 * the command and what to do. */
export function commandError(e: unknown): string {
  if (e && typeof e === 'object' && 'message' in e && typeof e.message === 'string') {
    const m = e.message;
    return m.startsWith('loci') ? m : `loci: ${m}`;
  }
  return `loci: ${String(e)}`;
}
