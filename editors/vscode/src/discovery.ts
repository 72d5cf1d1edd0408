// Where the `loci` binary is: `LOCI_SERVER_PATH`, then the `loci.server.path` setting, then
// `loci` on PATH; when none is found, a message that says what to install and what to set.
// Pure (no `vscode` import), so `node --test` covers it.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** What discovery looks at; tests pass their own. */
export interface DiscoveryInput {
  /** The extension host's environment (`LOCI_SERVER_PATH`, `PATH`, `PATHEXT`, `HOME`). */
  env: Record<string, string | undefined>;
  /** The `loci.server.path` setting ('' when unset). */
  setting: string;
  /** The first workspace folder's path, for a relative setting and `${workspaceFolder}`. */
  workspaceFolder?: string;
  /** `process.platform`. */
  platform: NodeJS.Platform;
  /** True when `p` is an executable regular file. */
  isExecutable: (p: string) => boolean;
}

/** Where the server was found. */
export type ServerSource = 'LOCI_SERVER_PATH' | 'loci.server.path' | 'PATH';

/** The outcome: a path and where it came from, or a message saying what to do. */
export type Discovery =
  | { found: true; path: string; source: ServerSource }
  | { found: false; message: string };

/** What to do when no server is found, shared by every message. */
export const INSTALL_HINT =
  'Install loci (`cargo install --locked --git https://github.com/loci-dev/loci loci-cli`) so that ' +
  '`loci` is on PATH, or set the `loci.server.path` setting (or the LOCI_SERVER_PATH environment ' +
  'variable) to the binary.';

/** The executable-file check used outside tests. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Expands `~`, `${userHome}` and `${workspaceFolder}`; a relative path is taken from the
 * workspace folder. */
export function expand(p: string, input: Pick<DiscoveryInput, 'env' | 'workspaceFolder' | 'platform'>): string {
  const pathApi = input.platform === 'win32' ? path.win32 : path.posix;
  const home = input.env.HOME ?? input.env.USERPROFILE ?? '';
  let out = p.trim();
  if (home && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
    out = home + out.slice(1);
  }
  out = out.split('${userHome}').join(home);
  if (input.workspaceFolder !== undefined) {
    out = out.split('${workspaceFolder}').join(input.workspaceFolder);
  }
  if (!pathApi.isAbsolute(out) && input.workspaceFolder !== undefined) {
    out = pathApi.join(input.workspaceFolder, out);
  }
  return out;
}

/** Every file `loci` could be on PATH, in search order. */
export function pathCandidates(input: Pick<DiscoveryInput, 'env' | 'platform'>): string[] {
  const win = input.platform === 'win32';
  const pathApi = win ? path.win32 : path.posix;
  const pathVar = input.env.PATH ?? input.env.Path ?? '';
  const dirs = pathVar.split(win ? ';' : ':').filter((d) => d.length > 0);
  const names = win
    ? (input.env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM')
        .split(';')
        .filter((e) => e.length > 0)
        .map((e) => 'loci' + e.toLowerCase())
    : ['loci'];
  return dirs.flatMap((d) => names.map((n) => pathApi.join(d, n)));
}

/** Finds the server. An override that is set but wrong is an error naming it, never
 * silently skipped: the user set it for a reason. */
export function findServer(input: DiscoveryInput): Discovery {
  const fromEnv = input.env.LOCI_SERVER_PATH?.trim();
  if (fromEnv) {
    const p = expand(fromEnv, input);
    return input.isExecutable(p)
      ? { found: true, path: p, source: 'LOCI_SERVER_PATH' }
      : {
          found: false,
          message: `loci: LOCI_SERVER_PATH is set to ${p}, which is not an executable file. Fix or unset the variable. ${INSTALL_HINT}`,
        };
  }
  const setting = input.setting.trim();
  if (setting) {
    const p = expand(setting, input);
    return input.isExecutable(p)
      ? { found: true, path: p, source: 'loci.server.path' }
      : {
          found: false,
          message: `loci: the setting loci.server.path is ${p}, which is not an executable file. Point it at the loci binary or clear it to use \`loci\` on PATH. ${INSTALL_HINT}`,
        };
  }
  for (const candidate of pathCandidates(input)) {
    if (input.isExecutable(candidate)) {
      return { found: true, path: candidate, source: 'PATH' };
    }
  }
  return {
    found: false,
    message: `loci: the language server was not found (no LOCI_SERVER_PATH, no loci.server.path setting, no \`loci\` on PATH). ${INSTALL_HINT}`,
  };
}
