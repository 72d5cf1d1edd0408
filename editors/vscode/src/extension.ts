// The VS Code extension: starts `loci lsp` (found by `discovery.ts`), shows scan progress,
// the stale-memory count and the pages behind the code in the status bar, and exposes loci's commands (context, why,
// impact, remember, decide, confirm, restart). Everything it shows comes from the server's
// command results (`{envelope..., "markdown": "..."}`) and diagnostics; no logic of its own.

import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  DocumentSymbol,
  DocumentSymbolRequest,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type FeatureState,
} from 'vscode-languageclient/node';

import { findServer, isExecutableFile } from './discovery';
import { documentSelector } from './languages';
import {
  behindText,
  commandError,
  impactLocations,
  markdownOf,
  PREVIEW_COMMAND,
  relativePath,
  recordBehind,
  resultView,
  staleCount,
  statusText,
  whyTarget,
  type PagesBehindParams,
  type StatusState,
} from './results';
import { clientInitializationOptions, initializationOptions, serverEnvironment, type SettingSchema } from './settings';

/** Virtual documents holding command results, rendered by the markdown preview. */
const RESULT_SCHEME = 'loci-result';

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
/** "loci: 3 pages behind": shown while pages are behind the code; a click drafts them. */
let behindItem: vscode.StatusBarItem;
/** The latest `$/loci/pagesBehind` per workspace root. */
const behind = new Map<string, PagesBehindParams>();
let log: vscode.LogOutputChannel;
const state: StatusState = { server: 'stopped', stale: 0 };
const results = new Map<string, string>();
const resultsChanged = new vscode.EventEmitter<vscode.Uri>();
let missingMessage: string | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  status = vscode.window.createStatusBarItem('loci.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'loci';
  behindItem = vscode.window.createStatusBarItem('loci.behind', vscode.StatusBarAlignment.Left, 9);
  behindItem.name = 'loci: pages behind the code';
  behindItem.command = 'loci.draftPages';
  context.subscriptions.push(behindItem);
  // One log for every server process this window starts (the server's stderr goes here).
  log = vscode.window.createOutputChannel('loci', { log: true });
  context.subscriptions.push(status, resultsChanged, log);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, {
      onDidChange: resultsChanged.event,
      provideTextDocumentContent: (uri) => results.get(uri.toString()) ?? '',
    }),
    vscode.languages.onDidChangeDiagnostics(() => updateStale()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // While no server was found, any change may be the one that makes it findable: VS
      // Code rewrites settings.json at startup (migrating old values), and a search made
      // meanwhile read `loci.server.path` as unset and never looked again.
      const loci = e.affectsConfiguration('loci') && !e.affectsConfiguration('loci.trace');
      if (loci || state.server === 'missing') {
        void restart(context);
      }
    }),
    vscode.commands.registerCommand('loci.showContext', () => showContext()),
    vscode.commands.registerCommand('loci.showWhy', () => showWhy()),
    vscode.commands.registerCommand('loci.showImpact', () => showImpact()),
    vscode.commands.registerCommand('loci.rememberHere', () => rememberHere(false)),
    vscode.commands.registerCommand('loci.replaceMemoryHere', () => rememberHere(true)),
    vscode.commands.registerCommand('loci.decideHere', () => decideHere()),
    vscode.commands.registerCommand('loci.confirmHere', () => confirmHere()),
    vscode.commands.registerCommand('loci.syncHistory', () => showAnswer('loci.sync', 'sync')),
    vscode.commands.registerCommand('loci.draftPages', () => showAnswer('loci.synthesize', 'pages written')),
    vscode.commands.registerCommand('loci.restartServer', () => restart(context)),
    vscode.commands.registerCommand('loci.showLog', () => log.show(true)),
    vscode.commands.registerCommand('loci.statusClicked', () => statusClicked(context)),
    { dispose: () => void client?.stop() },
  );
  status.command = 'loci.statusClicked';
  render();
  status.show();
  await start(context);
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  await c?.stop();
}

// ---- the client ---------------------------------------------------------------------

async function start(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('loci');
  const found = findServer({
    env: process.env,
    setting: config.get<string>('server.path', ''),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    platform: process.platform,
    isExecutable: isExecutableFile,
  });
  if (!found.found) {
    log.error(found.message);
    missingMessage = found.message;
    state.server = 'missing';
    render();
    void showMissing(found.message);
    return;
  }
  missingMessage = undefined;
  const properties = (context.extension.packageJSON as PackageJson).contributes.configuration.properties;
  const env = serverEnvironment(process.env, config.get<string>('server.logLevel', 'default'));
  const serverOptions: ServerOptions = {
    run: { command: found.path, args: ['lsp'], options: { env } },
    debug: { command: found.path, args: ['lsp'], options: { env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: log,
    initializationOptions: clientInitializationOptions(
      initializationOptions(properties, (setting) => {
        const i = config.inspect(setting.slice('loci.'.length));
        const user =
          i?.globalValue !== undefined || i?.workspaceValue !== undefined || i?.workspaceFolderValue !== undefined;
        return { value: config.get(setting.slice('loci.'.length)), user };
      }),
    ),
    middleware: {
      // The server's commands run from code actions and code lenses (why, impact, confirm):
      // show what they answered, as the palette commands do.
      executeCommand: async (command, args, next) => {
        const result: unknown = await next(command, args);
        if (result === undefined || result === null) {
          return result;
        }
        const view = resultView(command);
        if (view === 'preview') {
          await showMarkdown(command.slice('loci.'.length), markdownOf(result, command));
        } else if (view === 'message') {
          void vscode.window.showInformationMessage(firstLine(markdownOf(result, command)));
        }
        return result;
      },
    },
  };
  const c = new LanguageClient('loci', 'loci', serverOptions, clientOptions);
  c.registerFeature(new ScanProgressFeature(c));
  // After a commit the server syncs on its own and says how many pages are behind the code.
  c.onNotification('$/loci/pagesBehind', (p: PagesBehindParams) => {
    recordBehind(behind, p);
    render();
  });
  c.onDidChangeState((e) => {
    state.server = e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped';
    if (e.newState !== State.Running) {
      state.scan = undefined;
    }
    render();
  });
  client = c;
  state.server = 'starting';
  render();
  try {
    await c.start();
    log.info(`loci: started ${found.path} (found through ${found.source})`);
  } catch (e) {
    void vscode.window.showErrorMessage(`loci: the language server ${found.path} failed to start: ${commandError(e)}`);
  }
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  const c = client;
  client = undefined;
  if (c !== undefined) {
    try {
      await c.stop();
    } catch (e) {
      log.warn(`stopping the server: ${String(e)}`);
    }
  }
  state.stale = 0;
  state.scan = undefined;
  behind.clear();
  await start(context);
  updateStale();
}

async function showMissing(message: string): Promise<void> {
  const pick = await vscode.window.showErrorMessage(message, 'Open Settings', 'Retry');
  if (pick === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'loci.server.path');
  } else if (pick === 'Retry') {
    await vscode.commands.executeCommand('loci.restartServer');
  }
}

async function statusClicked(context: vscode.ExtensionContext): Promise<void> {
  if (missingMessage !== undefined) {
    await showMissing(missingMessage);
  } else if (state.server === 'stopped') {
    await restart(context);
  } else if (state.stale > 0) {
    await vscode.commands.executeCommand('workbench.actions.view.problems');
  } else {
    log.show(true);
  }
}

/** Replaces the client's built-in `window/workDoneProgress/create` handler (features
 * initialize in registration order, so this one runs after it, before any server message)
 * to show loci's scan progress in the status bar. */
class ScanProgressFeature implements StaticFeature {
  private readonly active = new Set<vscode.Disposable>();
  constructor(private readonly c: LanguageClient) {}

  fillClientCapabilities(capabilities: { window?: { workDoneProgress?: boolean } }): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }

  initialize(): void {
    this.c.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const d = this.c.onProgress(WorkDoneProgress.type, token, (value) => {
        if (value.kind === 'end') {
          state.scan = undefined;
          d.dispose();
          this.active.delete(d);
        } else {
          const title = value.kind === 'begin' ? value.title : state.scan?.title;
          state.scan = { title, message: value.message, percentage: value.percentage };
        }
        render();
      });
      this.active.add(d);
    });
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {
    for (const d of this.active) {
      d.dispose();
    }
    this.active.clear();
    state.scan = undefined;
  }
}

interface PackageJson {
  contributes: { configuration: { properties: Record<string, SettingSchema> } };
}

// ---- status bar ---------------------------------------------------------------------

function updateStale(): void {
  state.stale = staleCount(vscode.languages.getDiagnostics().map(([, list]) => list));
  render();
}

function render(): void {
  const { text, tooltip } = statusText(state);
  status.text = text;
  status.tooltip = tooltip;
  status.backgroundColor =
    state.server === 'missing' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  const b = state.server === 'running' ? behindText(behind.values()) : undefined;
  if (b === undefined) {
    behindItem.hide();
  } else {
    behindItem.text = b.text;
    behindItem.tooltip = b.tooltip;
    behindItem.show();
  }
}

// ---- commands -----------------------------------------------------------------------

function firstLine(markdown: string): string {
  return markdown.split('\n')[0].replace(/\*\*/g, '');
}

/** The running client, or undefined after telling the user why there is none. */
function running(): LanguageClient | undefined {
  if (client === undefined || !client.isRunning()) {
    void vscode.window.showErrorMessage(
      missingMessage ?? 'loci: the language server is not running. Run "Loci: Restart Server" or see "Loci: Show Server Log".',
    );
    return undefined;
  }
  return client;
}

/** Runs a loci command with its one argument object; errors are shown and give undefined. */
async function run(command: string, args: Record<string, unknown>): Promise<unknown> {
  const c = running();
  if (c === undefined) {
    return undefined;
  }
  try {
    return await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] });
  } catch (e) {
    void vscode.window.showErrorMessage(commandError(e));
    return undefined;
  }
}

/** The active file as a repo-relative path in its workspace folder. */
interface Here {
  editor: vscode.TextEditor;
  root: string;
  relative: string;
  uri: string;
}

function here(action: string): Here | undefined {
  const editor = vscode.window.activeTextEditor;
  const doc = editor?.document;
  const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  const relative =
    doc && folder && doc.uri.scheme === 'file' ? relativePath(folder.uri.fsPath, doc.uri.fsPath, path.sep) : undefined;
  if (editor === undefined || folder === undefined || relative === undefined) {
    void vscode.window.showErrorMessage(`loci: ${action} needs a file of a workspace folder in the active editor.`);
    return undefined;
  }
  return { editor, root: folder.uri.fsPath, relative, uri: editor.document.uri.toString() };
}

/** Shows markdown in a locked preview beside the code (a read-only virtual document per
 * kind of result): opening a markdown file does not replace it. */
async function showMarkdown(kind: string, markdown: string): Promise<void> {
  const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/loci ${kind}.md` });
  results.set(uri.toString(), markdown);
  resultsChanged.fire(uri);
  try {
    await vscode.commands.executeCommand(PREVIEW_COMMAND, uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  }
}

/** Runs a command that needs no input but the workspace (the active file's, else the
 * first), and shows its markdown answer. */
async function showAnswer(command: string, kind: string): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  const args: Record<string, unknown> = {};
  if (doc?.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(doc.uri)) {
    args.uri = doc.uri.toString();
  }
  const result = await run(command, args);
  if (result !== undefined) {
    await showMarkdown(kind, markdownOf(result, command));
  }
}

async function showContext(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const query = await vscode.window.showInputBox({
    title: 'loci: context',
    prompt: 'What do you want to know about this codebase?',
    placeHolder: 'how does login work',
    value: selected.includes('\n') ? '' : selected,
  });
  if (!query?.trim()) {
    return;
  }
  const args: Record<string, unknown> = { query };
  if (editor?.document.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(editor.document.uri)) {
    args.uri = editor.document.uri.toString();
  }
  const result = await run('loci.context', args);
  if (result !== undefined) {
    await showMarkdown('context', markdownOf(result, 'loci.context'));
  }
}

async function showWhy(): Promise<void> {
  const h = here('Why');
  if (h === undefined) {
    return;
  }
  const target = whyTarget(h.relative, h.editor.selection.active.line);
  const result = await run('loci.why', { target, uri: h.uri });
  if (result !== undefined) {
    await showMarkdown('why', markdownOf(result, 'loci.why'));
  }
}

/** The innermost of loci's document symbols around `pos`. */
function innermost(symbols: DocumentSymbol[], pos: vscode.Position): DocumentSymbol | undefined {
  for (const s of symbols) {
    const r = s.range;
    const after = pos.line > r.start.line || (pos.line === r.start.line && pos.character >= r.start.character);
    const before = pos.line < r.end.line || (pos.line === r.end.line && pos.character <= r.end.character);
    if (after && before) {
      return innermost(s.children ?? [], pos) ?? s;
    }
  }
  return undefined;
}

async function showImpact(): Promise<void> {
  const h = here('Impact');
  const c = h && running();
  if (h === undefined || c === undefined) {
    return;
  }
  let target = h.relative;
  try {
    // Both sides count UTF-16 code units: VS Code's client negotiates no other encoding.
    const symbols = await c.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: h.uri } });
    const around =
      Array.isArray(symbols) && symbols.length > 0 && 'range' in symbols[0]
        ? innermost(symbols as DocumentSymbol[], h.editor.selection.active)
        : undefined;
    if (around !== undefined) {
      target = around.name;
    }
  } catch (e) {
    c.warn(`document symbols for impact: ${String(e)}`);
  }
  const result = await run('loci.impact', { target, uri: h.uri });
  if (result === undefined) {
    return;
  }
  const locations = impactLocations(result);
  const title = firstLine(markdownOf(result, 'loci.impact')).replace(/`/g, '');
  if (locations.length === 0) {
    void vscode.window.showInformationMessage(`${title}: nothing depends on it in the map.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    locations.map((l) => ({ label: l.label, description: l.description, detail: `${l.path}:${l.line + 1}`, location: l })),
    { title, placeHolder: `${locations.length} dependents: pick one to open it`, matchOnDescription: true, matchOnDetail: true },
  );
  if (picked !== undefined) {
    const uri = vscode.Uri.file(path.join(h.root, ...picked.location.path.split('/')));
    const line = picked.location.line;
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0) });
  }
}

/** Remember: the selection — or, with nothing selected, what the user types — is added to
 * this file's memory page; with `replace` (Replace Memory) it becomes the whole page. */
async function rememberHere(replace: boolean): Promise<void> {
  const h = here(replace ? 'Replace Memory' : 'Remember');
  if (h === undefined) {
    return;
  }
  const selection = h.editor.selection.isEmpty ? '' : h.editor.document.getText(h.editor.selection).trim();
  const body =
    selection ||
    (await vscode.window.showInputBox({
      title: replace ? `loci: replace the memory of ${h.relative}` : `loci: remember about ${h.relative}`,
      prompt: replace
        ? `The whole new text of the memory page for ${h.relative} (a new revision; earlier ones are kept)`
        : `A note to add to the memory page for ${h.relative} (a new revision; earlier ones are kept)`,
      placeHolder: '`login()` retries twice before locking the account',
    }));
  if (!body?.trim()) {
    return;
  }
  const args: Record<string, unknown> = { subject: h.relative, body, uri: h.uri };
  if (replace) {
    args.replace = true;
  }
  const result = await run('loci.remember', args);
  if (result !== undefined) {
    void vscode.window.showInformationMessage(firstLine(markdownOf(result, 'loci.remember')));
  }
}

async function decideHere(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const folder = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri) : undefined;
  const relative =
    editor && folder && editor.document.uri.scheme === 'file'
      ? relativePath(folder.uri.fsPath, editor.document.uri.fsPath, path.sep)
      : undefined;
  const text = await vscode.window.showInputBox({
    title: relative ? `loci: record a decision about ${relative}` : 'loci: record a decision',
    prompt: 'The decision and its reason',
    placeHolder: 'use WAL: several processes share the database',
  });
  if (!text?.trim()) {
    return;
  }
  const args: Record<string, unknown> = { text };
  if (relative !== undefined && editor !== undefined) {
    args.subject = relative;
    args.uri = editor.document.uri.toString();
  }
  const result = await run('loci.decide', args);
  if (result !== undefined) {
    void vscode.window.showInformationMessage(firstLine(markdownOf(result, 'loci.decide')));
  }
}

async function confirmHere(): Promise<void> {
  const h = here('Confirm');
  if (h === undefined) {
    return;
  }
  if (h.editor.document.isDirty) {
    void vscode.window.showErrorMessage('loci: save the file first: confirming snapshots the code on disk.');
    return;
  }
  // A scan first (incremental; it waits for one already running) so the map holds what was saved.
  if ((await run('loci.scan', { uri: h.uri })) === undefined) {
    return;
  }
  const result = await run('loci.confirm', { subject: h.relative, uri: h.uri });
  if (result !== undefined) {
    void vscode.window.showInformationMessage(firstLine(markdownOf(result, 'loci.confirm')));
  }
}
