// The bundled extension (dist/extension.js) activated against a minimal stand-in for the
// `vscode` module: it registers its commands and status bar item, and when no server can
// be found it says what to do (and starts nothing). The language client itself needs a real
// VS Code; what it talks to is covered by the server's own tests.

import { strict as assert } from 'node:assert';
import Module from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';

interface Recorded {
  commands: string[];
  errors: { message: string; items: string[] }[];
  status: { text: string; tooltip: string; shown: boolean; command?: string };
  /** The second item, "loci: 3 pages behind". */
  behind: { text: string; tooltip: string; shown: boolean; command?: string };
  logs: string[];
  configurationListeners: ((e: unknown) => void)[];
}

function stub(rec: Recorded): unknown {
  // The client library subclasses vscode's classes (CodeLens, Diagnostic, ...) when it
  // loads: any name this stand-in does not define is an empty class.
  const classes = new Map<string | symbol, unknown>();
  const generic = (target: Record<string | symbol, unknown>) =>
    new Proxy(target, {
      get: (t, name) => {
        if (name in t) {
          return t[name];
        }
        if (!classes.has(name)) {
          classes.set(name, class {});
        }
        return classes.get(name);
      },
    });
  const disposable = { dispose: () => undefined };
  class EventEmitter {
    event = () => disposable;
    fire(): void {}
    dispose(): void {}
  }
  return generic({
    StatusBarAlignment: { Left: 1, Right: 2 },
    ThemeColor: class {
      constructor(public id: string) {}
    },
    EventEmitter,
    Uri: { from: (c: unknown) => c, file: (p: string) => ({ fsPath: p }) },
    window: {
      createStatusBarItem: (id: string) => {
        const r = id === 'loci.behind' ? rec.behind : rec.status;
        const item = {
          name: '',
          get text() {
            return r.text;
          },
          set text(t: string) {
            r.text = t;
          },
          get tooltip() {
            return r.tooltip;
          },
          set tooltip(t: string) {
            r.tooltip = t;
          },
          set command(c: string) {
            r.command = c;
          },
          backgroundColor: undefined,
          show: () => {
            r.shown = true;
          },
          hide: () => {
            r.shown = false;
          },
          dispose: () => undefined,
        };
        return item;
      },
      createOutputChannel: () => ({
        error: (m: string) => rec.logs.push(`error ${m}`),
        warn: (m: string) => rec.logs.push(`warn ${m}`),
        info: (m: string) => rec.logs.push(`info ${m}`),
        show: () => undefined,
        dispose: () => undefined,
      }),
      showErrorMessage: (message: string, ...items: string[]) => {
        rec.errors.push({ message, items });
        return Promise.resolve(undefined);
      },
    },
    workspace: {
      workspaceFolders: undefined,
      registerTextDocumentContentProvider: () => disposable,
      onDidChangeConfiguration: (listener: (e: unknown) => void) => {
        rec.configurationListeners.push(listener);
        return disposable;
      },
      getConfiguration: () => ({ get: (_k: string, d: unknown) => d, inspect: () => undefined }),
    },
    languages: { onDidChangeDiagnostics: () => disposable, getDiagnostics: () => [] },
    commands: {
      registerCommand: (id: string) => {
        rec.commands.push(id);
        return disposable;
      },
      executeCommand: () => Promise.resolve(undefined),
    },
  });
}

test('activation without a server: commands, status bar, and what to do', async () => {
  const rec: Recorded = {
    commands: [],
    errors: [],
    status: { text: '', tooltip: '', shown: false },
    behind: { text: '', tooltip: '', shown: false },
    logs: [],
    configurationListeners: [],
  };
  const vscode = stub(rec);
  const load = (Module as unknown as { _load: (r: string, ...rest: unknown[]) => unknown })._load;
  (Module as unknown as { _load: (r: string, ...rest: unknown[]) => unknown })._load = function (
    this: unknown,
    request: string,
    ...rest: unknown[]
  ) {
    return request === 'vscode' ? vscode : load.call(this, request, ...rest);
  };
  const saved = process.env.LOCI_SERVER_PATH;
  process.env.LOCI_SERVER_PATH = '/nonexistent/loci';
  try {
    const root = path.join(__dirname, '..', '..');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(path.join(root, 'dist', 'extension.js')) as {
      activate: (c: unknown) => Promise<void>;
      deactivate: () => Promise<void>;
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const packageJSON = require(path.join(root, 'package.json')) as unknown;
    await ext.activate({ subscriptions: [], extension: { packageJSON } });
    assert.deepEqual(rec.commands.sort(), [
      'loci.confirmHere',
      'loci.decideHere',
      'loci.draftPages',
      'loci.rememberHere',
      'loci.replaceMemoryHere',
      'loci.restartServer',
      'loci.showContext',
      'loci.showImpact',
      'loci.showLog',
      'loci.showWhy',
      'loci.statusClicked',
      'loci.syncHistory',
    ]);
    const message =
      'loci: LOCI_SERVER_PATH is set to /nonexistent/loci, which is not an executable file. Fix or unset the variable. ' +
      'Install loci (`cargo install --locked --git https://github.com/loci-dev/loci loci-cli`) so that `loci` is on PATH, ' +
      'or set the `loci.server.path` setting (or the LOCI_SERVER_PATH environment variable) to the binary.';
    assert.deepEqual(rec.errors, [{ message, items: ['Open Settings', 'Retry'] }]);
    assert.deepEqual(rec.logs, [`error ${message}`]);
    assert.deepEqual(rec.status, {
      text: '$(error) loci',
      tooltip: 'loci: the language server was not found (click for details)',
      shown: true,
      command: 'loci.statusClicked',
    });
    // Shown only once the server says pages are behind the code; a click drafts them.
    assert.deepEqual(rec.behind, { text: '', tooltip: '', shown: false, command: 'loci.draftPages' });
    // Fault seen in code-server: a change to another setting (VS Code migrating one at
    // startup) while no server was found searched again — not only a change of `loci.*`.
    assert.equal(rec.configurationListeners.length, 1);
    rec.configurationListeners[0]({ affectsConfiguration: (section: string) => section === 'extensions' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(rec.logs, [`error ${message}`, `error ${message}`]);
    await ext.deactivate();
  } finally {
    (Module as unknown as { _load: unknown })._load = load;
    if (saved === undefined) {
      delete process.env.LOCI_SERVER_PATH;
    } else {
      process.env.LOCI_SERVER_PATH = saved;
    }
  }
});
