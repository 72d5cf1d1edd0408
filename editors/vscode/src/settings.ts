// The extension's settings and the server's `initializationOptions`.
//
// One rule ties them: a setting `loci.NAME` whose NAME has no dot is the server's
// `initializationOptions.NAME` (the Rust struct `loci_lsp::InitializationOptions`, camelCase),
// sent only when the user set it, so the server's own default applies otherwise.
// Settings with a dot (`loci.server.path`, `loci.trace.server`, ...) belong to the
// extension. `server/cli/tests/it/editors_vscode.rs` checks package.json against the Rust
// struct: every server setting exists there with the same type and default, and every
// user-facing field of the struct has a setting. Pure (no `vscode` import).

/** One `contributes.configuration.properties` entry, as far as this module reads it. */
export interface SettingSchema {
  type?: string | string[];
  default?: unknown;
}

/** How a setting's value was set: `user` is true when any scope (user, workspace, folder)
 * holds a value. */
export interface SettingValue {
  value: unknown;
  user: boolean;
}

const PREFIX = 'loci.';

/** The server's key for a setting name (`loci.maxFiles` → `maxFiles`), or undefined for
 * the extension's own settings. */
export function serverKey(setting: string): string | undefined {
  if (!setting.startsWith(PREFIX)) {
    return undefined;
  }
  const rest = setting.slice(PREFIX.length);
  return rest.length > 0 && !rest.includes('.') ? rest : undefined;
}

/** `initializationOptions`: the server settings the user set, by server key. */
export function initializationOptions(
  properties: Record<string, SettingSchema>,
  read: (setting: string) => SettingValue,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const setting of Object.keys(properties).sort()) {
    const key = serverKey(setting);
    if (key === undefined) {
      continue;
    }
    const v = read(setting);
    if (v.user) {
      out[key] = v.value;
    }
  }
  return out;
}

/** What the extension itself sends besides the user's settings: it shows command answers
 * itself (`resultView` in results.ts), so the server must not open them too
 * (`initializationOptions.showResults`, server/lsp/src/lib.rs). */
export const EXTENSION_OPTIONS: Readonly<Record<string, unknown>> = { showResults: false };

/** `initializationOptions` as sent: the user's server settings plus [`EXTENSION_OPTIONS`]. */
export function clientInitializationOptions(fromSettings: Record<string, unknown>): Record<string, unknown> {
  return { ...fromSettings, ...EXTENSION_OPTIONS };
}

/** The environment for the server process: `RUST_LOG` from `loci.server.logLevel` unless it
 * is `default` (then the editor's `RUST_LOG`, else the server's default, `warn`). */
export function serverEnvironment(
  base: Record<string, string | undefined>,
  logLevel: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined) {
      env[k] = v;
    }
  }
  if (logLevel && logLevel !== 'default') {
    env.RUST_LOG = `loci=${logLevel},warn`;
  }
  return env;
}
