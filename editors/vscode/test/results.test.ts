// Reading command results and diagnostics: impact locations, why targets, stale counts and
// the status bar text.

import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import {
  behindText,
  commandError,
  impactLocations,
  markdownOf,
  PREVIEW_COMMAND,
  recordBehind,
  relativePath,
  resultView,
  splitAt,
  staleCount,
  statusText,
  whyTarget,
  type PagesBehindParams,
} from '../src/results';

test('impact nodes become locations at their edge', () => {
  // The shape of `loci.impact`'s result (server/engine/src/map/query.rs `Impact`).
  const result = {
    result: {
      target: ['rust/src/store.rs'],
      mode: 'file',
      depth: 3,
      hard: false,
      nodes: [
        {
          id: 'rust/src/lib.rs',
          path: 'rust/src/lib.rs',
          depth: 1,
          via: { from: 'rust/src/lib.rs', to: 'rust/src/store.rs', kind: 'import', at: 'rust/src/lib.rs:3', provenance: 'stated', confidence: 1 },
        },
        {
          id: 'rust/src/lib.rs#open_default@function',
          path: 'rust/src/lib.rs',
          depth: 2,
          via: { kind: 'call', at: 'rust/src/lib.rs:10', provenance: 'derived', confidence: 0.6 },
        },
        { id: 'no/path' },
      ],
      files: ['rust/src/lib.rs', 'rust/src/store.rs'],
    },
    markdown: '**Impact of `rust/src/store.rs`** (file, depth 3)',
  };
  assert.deepEqual(impactLocations(result), [
    { label: 'rust/src/lib.rs', description: 'depth 1 · import · stated 1.00', path: 'rust/src/lib.rs', line: 2 },
    {
      label: 'rust/src/lib.rs#open_default@function',
      description: 'depth 2 · call · derived 0.60',
      path: 'rust/src/lib.rs',
      line: 9,
    },
  ]);
  assert.deepEqual(impactLocations({ result: { nodes: [] } }), []);
  assert.deepEqual(impactLocations(undefined), []);
});

test('path:line splits at the last colon', () => {
  assert.deepEqual(splitAt('C:/repo/a.rs:12'), { path: 'C:/repo/a.rs', line: 12 });
  assert.deepEqual(splitAt('a.rs'), { path: 'a.rs', line: 1 });
  assert.deepEqual(splitAt('a.rs:x'), { path: 'a.rs:x', line: 1 });
});

test('why targets are repo-relative with one-based lines', () => {
  assert.equal(relativePath('/work/repo', '/work/repo/src/a.rs', '/'), 'src/a.rs');
  assert.equal(relativePath('C:\\repo', 'C:\\repo\\src\\a.rs', '\\'), 'src/a.rs');
  assert.equal(relativePath('/work/repo', '/work/repo2/a.rs', '/'), undefined);
  assert.equal(whyTarget('src/a.rs', 0), 'src/a.rs:1');
});

test('stale count: source loci and a stale code only', () => {
  const n = staleCount([
    [
      { source: 'loci', code: 'stale_memory' },
      { source: 'loci', code: { value: 'stale_memory' } },
      { source: 'loci', code: 'missing_path' },
      { source: 'rustc', code: 'stale_memory' },
    ],
    [{ source: 'loci', code: 'stale_memory' }, { source: 'loci' }],
  ]);
  assert.equal(n, 3);
});

test('status bar text', () => {
  assert.deepEqual(statusText({ server: 'running', stale: 0 }), {
    text: '$(book) loci',
    tooltip: 'loci: map up to date\n0 stale memories in open files',
  });
  assert.deepEqual(statusText({ server: 'running', stale: 2, scan: { message: '120/500 files', percentage: 24 } }), {
    text: '$(sync~spin) loci: scanning 24% $(warning) 2 stale',
    tooltip: 'loci: scanning: 120/500 files\n2 stale memories in open files',
  });
  assert.deepEqual(
    statusText({
      server: 'running',
      stale: 0,
      scan: { title: 'loci: writing pages', message: 'page 2 of 5: src/auth.py', percentage: 20 },
    }),
    { text: '$(sync~spin) loci: writing pages 20%', tooltip: 'loci: writing pages: page 2 of 5: src/auth.py\n0 stale memories in open files' },
  );
  assert.equal(statusText({ server: 'running', stale: 1 }).tooltip, 'loci: map up to date\n1 stale memory in open files');
  assert.equal(statusText({ server: 'missing', stale: 0 }).text, '$(error) loci');
});

test('markdown and errors', () => {
  assert.equal(markdownOf({ markdown: '**Why**' }, 'loci.why'), '**Why**');
  assert.equal(markdownOf(null, 'loci.why'), 'loci.why returned no markdown.');
  assert.equal(
    commandError({ code: 1002, message: 'loci.context is not available yet: the engine has no `context` operation in this build' }),
    'loci.context is not available yet: the engine has no `context` operation in this build',
  );
  assert.equal(commandError(new Error('boom')), 'loci: boom');
});

test('fault: code actions showed only a first line, and a markdown file replaced the preview', () => {
  // Every reading command's answer is a preview, whoever ran it (a code action on a
  // diagnostic runs loci.why or loci.impact through the middleware).
  assert.deepEqual(
    ['loci.why', 'loci.impact', 'loci.context', 'loci.recap', 'loci.sync', 'loci.synthesize'].map(resultView),
    ['preview', 'preview', 'preview', 'preview', 'preview', 'preview'],
  );
  assert.deepEqual(
    ['loci.remember', 'loci.decide', 'loci.learn', 'loci.confirm', 'loci.resolve', 'loci.scan'].map(resultView),
    ['message', 'message', 'message', 'message', 'message', 'message'],
  );
  assert.equal(resultView('loci.debug.text'), 'none');
  // A locked preview stays on its answer when another markdown editor becomes active.
  assert.equal(PREVIEW_COMMAND, 'markdown.showLockedPreviewToSide');
});

test('pages behind the code: the second status bar item', () => {
  // `$/loci/pagesBehind` as the server sends it after a commit
  // (tests/tests/it/lsp.rs `after_a_commit_the_editor_hears_how_many_pages_are_behind_the_code`).
  const behind = new Map<string, PagesBehindParams>();
  recordBehind(behind, {
    root: 'file:///repo',
    head: '0123456789abcdef0123456789abcdef01234567',
    count: 3,
    pages: ['src/auth.py', 'src/billing.py', 'src'],
    message: '3 pages behind the code',
  });
  assert.deepEqual(behindText(behind.values()), {
    text: '$(history) loci: 3 pages behind',
    tooltip:
      'loci: 3 pages behind the code at 0123456789ab:\n- src/auth.py\n- src/billing.py\n- src\n' +
      'Click to draft them with the configured model (Loci: Draft Pages with the Configured Model).',
  });
  recordBehind(behind, { root: 'file:///repo', head: null, count: 1, pages: ['lib'], message: '1 page behind the code' });
  assert.equal(behindText(behind.values())?.text, '$(history) loci: 1 page behind');
  // Drafted (or confirmed): the item goes away.
  recordBehind(behind, { root: 'file:///repo', head: null, count: 0, pages: [], message: 'no page behind the code' });
  assert.equal(behindText(behind.values()), undefined);
  assert.equal(behind.size, 0);
});
