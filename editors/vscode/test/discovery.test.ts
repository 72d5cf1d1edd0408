// Server discovery: LOCI_SERVER_PATH, then loci.server.path, then PATH, else an actionable
// message; a set-but-wrong override is reported, never skipped.

import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { INSTALL_HINT, expand, findServer, pathCandidates, type DiscoveryInput } from '../src/discovery';

function input(over: Partial<DiscoveryInput>, executables: string[]): DiscoveryInput {
  return {
    env: { PATH: '/usr/local/bin:/usr/bin', HOME: '/home/ana' },
    setting: '',
    workspaceFolder: '/work/repo',
    platform: 'linux',
    isExecutable: (p) => executables.includes(p),
    ...over,
  };
}

test('LOCI_SERVER_PATH wins over the setting and PATH', () => {
  const r = findServer(
    input({ env: { PATH: '/usr/bin', LOCI_SERVER_PATH: '/opt/loci/bin/loci' }, setting: '/other/loci' }, [
      '/opt/loci/bin/loci',
      '/other/loci',
      '/usr/bin/loci',
    ]),
  );
  assert.deepEqual(r, { found: true, path: '/opt/loci/bin/loci', source: 'LOCI_SERVER_PATH' });
});

test('a LOCI_SERVER_PATH that is not executable is an error naming the variable', () => {
  const r = findServer(input({ env: { PATH: '/usr/bin', LOCI_SERVER_PATH: '/nope/loci' } }, ['/usr/bin/loci']));
  assert.deepEqual(r, {
    found: false,
    message: `loci: LOCI_SERVER_PATH is set to /nope/loci, which is not an executable file. Fix or unset the variable. ${INSTALL_HINT}`,
  });
});

test('the setting wins over PATH and expands ~ and ${workspaceFolder}', () => {
  assert.deepEqual(findServer(input({ setting: '~/bin/loci' }, ['/home/ana/bin/loci', '/usr/bin/loci'])), {
    found: true,
    path: '/home/ana/bin/loci',
    source: 'loci.server.path',
  });
  assert.deepEqual(findServer(input({ setting: '${workspaceFolder}/target/debug/loci' }, ['/work/repo/target/debug/loci'])), {
    found: true,
    path: '/work/repo/target/debug/loci',
    source: 'loci.server.path',
  });
  assert.deepEqual(findServer(input({ setting: 'target/release/loci' }, ['/work/repo/target/release/loci'])), {
    found: true,
    path: '/work/repo/target/release/loci',
    source: 'loci.server.path',
  });
});

test('a setting that is not executable is an error naming the setting', () => {
  const r = findServer(input({ setting: '/opt/missing' }, ['/usr/bin/loci']));
  assert.equal(r.found, false);
  assert.ok(!r.found && r.message.startsWith('loci: the setting loci.server.path is /opt/missing, which is not an executable file.'));
});

test('PATH is searched in order', () => {
  assert.deepEqual(findServer(input({}, ['/usr/bin/loci', '/usr/local/bin/loci'])), {
    found: true,
    path: '/usr/local/bin/loci',
    source: 'PATH',
  });
});

test('nothing found: the message says what to install and what to set', () => {
  const r = findServer(input({}, []));
  assert.deepEqual(r, {
    found: false,
    message:
      'loci: the language server was not found (no LOCI_SERVER_PATH, no loci.server.path setting, no `loci` on PATH). ' +
      'Install loci (`cargo install --locked --git https://github.com/loci-dev/loci loci-cli`) so that `loci` is on PATH, ' +
      'or set the `loci.server.path` setting (or the LOCI_SERVER_PATH environment variable) to the binary.',
  });
});

test('Windows: PATHEXT names and ; separators', () => {
  assert.deepEqual(
    pathCandidates({ env: { Path: 'C:\\bin;D:\\tools', PATHEXT: '.EXE;.CMD' }, platform: 'win32' }),
    ['C:\\bin\\loci.exe', 'C:\\bin\\loci.cmd', 'D:\\tools\\loci.exe', 'D:\\tools\\loci.cmd'],
  );
  assert.equal(
    expand('bin\\loci.exe', { env: {}, workspaceFolder: 'C:\\repo', platform: 'win32' }),
    'C:\\repo\\bin\\loci.exe',
  );
});

test('blank overrides are ignored', () => {
  assert.deepEqual(findServer(input({ env: { PATH: '/usr/bin', LOCI_SERVER_PATH: '  ' }, setting: ' ' }, ['/usr/bin/loci'])), {
    found: true,
    path: '/usr/bin/loci',
    source: 'PATH',
  });
});
