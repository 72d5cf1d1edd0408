// Settings: `loci.NAME` (no dot) is `initializationOptions.NAME`, sent only when set; the
// package.json is consistent with the extension's code. (The Rust side checks the same
// package.json against the server's struct: server/cli/tests/it/editors_vscode.rs.)

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { documentSelector, EXTENSIONS, LANGUAGES } from '../src/languages';
import {
  clientInitializationOptions,
  initializationOptions,
  serverEnvironment,
  serverKey,
  type SettingSchema,
} from '../src/settings';

const root = path.join(__dirname, '..', '..');
const repo = path.join(root, '..', '..');
interface Manifest {
  activationEvents: string[];
  contributes: {
    commands: { command: string; title: string; category: string }[];
    configuration: { properties: Record<string, SettingSchema> };
  };
}
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
const properties = manifest.contributes.configuration.properties;

test('server keys: one segment after loci.', () => {
  assert.equal(serverKey('loci.maxFiles'), 'maxFiles');
  assert.equal(serverKey('loci.server.path'), undefined);
  assert.equal(serverKey('loci.trace.server'), undefined);
  assert.equal(serverKey('other.maxFiles'), undefined);
  assert.equal(serverKey('loci.'), undefined);
});

test('the manifest has exactly these server settings', () => {
  const keys = Object.keys(properties).map(serverKey).filter((k) => k !== undefined).sort();
  assert.deepEqual(keys, ['debounceMs', 'falseSeverity', 'maxFiles', 'parseTimeoutMs', 'scan', 'staleSeverity']);
});

test('initializationOptions holds only what the user set', () => {
  const set: Record<string, unknown> = { 'loci.maxFiles': 5000, 'loci.server.path': '/x/loci', 'loci.scan': false };
  const opts = initializationOptions(properties, (s) => ({ value: set[s] ?? properties[s].default, user: s in set }));
  assert.deepEqual(opts, { maxFiles: 5000, scan: false });
  assert.deepEqual(initializationOptions(properties, (s) => ({ value: properties[s].default, user: false })), {});
});

test('fault: the server showed answers the extension shows too (showResults is false)', () => {
  assert.deepEqual(clientInitializationOptions({ maxFiles: 5000 }), { maxFiles: 5000, showResults: false });
  assert.deepEqual(clientInitializationOptions({}), { showResults: false });
});

test('fault: loci.server.path only worked as a Machine setting (it is machine-overridable)', () => {
  assert.equal((properties['loci.server.path'] as { scope?: string }).scope, 'machine-overridable');
});

test('server environment: RUST_LOG only when a level is chosen', () => {
  assert.deepEqual(serverEnvironment({ PATH: '/bin', RUST_LOG: 'info', X: undefined }, 'default'), {
    PATH: '/bin',
    RUST_LOG: 'info',
  });
  assert.deepEqual(serverEnvironment({ PATH: '/bin' }, 'debug'), { PATH: '/bin', RUST_LOG: 'loci=debug,warn' });
});

test('activation covers every served language', () => {
  const onLanguage = manifest.activationEvents
    .filter((e) => e.startsWith('onLanguage:'))
    .map((e) => e.slice('onLanguage:'.length));
  assert.deepEqual(onLanguage, [...LANGUAGES]);
  assert.ok(manifest.activationEvents.includes('workspaceContains:.loci/loci.db'));
});

test('the document selector takes every language id and every parsed extension', () => {
  const selector = documentSelector();
  assert.deepEqual(
    selector.filter((f) => f.language !== undefined),
    LANGUAGES.map((language) => ({ scheme: 'file', language })),
  );
  assert.deepEqual(selector.filter((f) => f.language === undefined), [
    { scheme: 'file', pattern: `**/*.{${EXTENSIONS.join(',')}}` },
  ]);
  assert.ok(EXTENSIONS.includes('kt') && EXTENSIONS.includes('tfvars') && EXTENSIONS.includes('R'));
  assert.ok(LANGUAGES.includes('shellscript') && LANGUAGES.includes('objective-c'));
});

test('contributed commands are the ones the extension registers, and none shadows a server command', () => {
  const source = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
  const registered = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  // `loci.statusClicked` is the status bar's click, not a palette command.
  assert.deepEqual(registered, [...contributed, 'loci.statusClicked'].sort());
  // vscode-languageclient registers every server command (executeCommandProvider) as a VS
  // Code command; a contributed command of the same id would fail to register.
  const commandsRs = fs.readFileSync(path.join(repo, 'server', 'lsp', 'src', 'commands.rs'), 'utf8');
  const serverCommands = [...commandsRs.matchAll(/CommandSpec::new\(\s*"(loci\.[a-z.]+)"/g)].map((m) => m[1]);
  assert.ok(serverCommands.includes('loci.context') && serverCommands.includes('loci.why'), String(serverCommands));
  for (const c of registered) {
    assert.ok(!serverCommands.includes(c), `${c} is also a server command`);
  }
  assert.ok(manifest.contributes.commands.every((c) => c.category === 'Loci'));
});
