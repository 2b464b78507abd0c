// The toolchain check of `npm start` and CI (scripts/toolchain.sh): which Debian packages it installs when tools or
// headers are missing, through sudo or not, and the one line it prints when it cannot install. Each case runs the
// script with a PATH that holds only fake tools: `id` (root or a user), `apt-get` and `sudo` (they log their
// arguments), and stand-ins for the tools that are "present"; headers are looked for in a temporary folder.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = path.join(ROOT, 'scripts', 'toolchain.sh');
const which = (cmd) => spawnSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim();
const BASH = which('bash');
const ENV = which('env');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'attnlens-toolchain-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const START_TOOLS = ['cmake', 'make', 'emcmake', 'em++', 'wasm-dis'];
const HEADERS = ['xsimd/xsimd.hpp', 'doctest/doctest.h', 'nlohmann/json.hpp'];
const INSTALL = 'apt-get install -y --no-install-recommends';

let n = 0;
/**
 * A fake machine: `tools` on PATH, `headers` under the include root, `uid` for `id -u`, with or without apt-get and
 * sudo. Returns { env, log } where log() lists the logged calls of apt-get and sudo.
 */
function machine({ tools = [], headers = [], uid = 0, aptGet = true, sudo = false }) {
  const dir = path.join(tmp, `m${n++}`);
  const bin = path.join(dir, 'bin');
  const inc = path.join(dir, 'include');
  const logFile = path.join(dir, 'calls.log');
  mkdirSync(bin, { recursive: true });
  mkdirSync(inc);
  const script = (name, body) => {
    writeFileSync(path.join(bin, name), `#!${BASH}\n${body}\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  symlinkSync(BASH, path.join(bin, 'bash'));
  symlinkSync(ENV, path.join(bin, 'env'));
  script('id', `echo ${uid}`);
  for (const t of tools) script(t, 'exit 0');
  if (aptGet) script('apt-get', `echo "apt-get $*" >> '${logFile}'`);
  if (sudo) script('sudo', `echo "sudo $*" >> '${logFile}'; exec "$@"`);
  for (const h of headers) {
    mkdirSync(path.join(inc, path.dirname(h)), { recursive: true });
    writeFileSync(path.join(inc, h), '');
  }
  return {
    env: { PATH: bin, ATTNLENS_INCLUDE_ROOT: inc },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n') : []),
  };
}

function toolchain(purpose, m, extraEnv = {}) {
  const r = spawnSync(BASH, [SCRIPT, purpose], { env: { ...m.env, ...extraEnv }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('everything present: installs nothing, says nothing', () => {
  const m = machine({ tools: START_TOOLS, headers: HEADERS });
  assert.deepEqual(toolchain('start', m), { status: 0, stdout: '', stderr: '' });
  assert.deepEqual(m.log(), []);
});

test('a bare machine, dry run: the exact packages `npm start` would install, and nothing runs', () => {
  const m = machine({});
  const r = toolchain('start', m, { ATTNLENS_DRY_RUN: '1' });
  const pkgs = 'cmake make emscripten binaryen libxsimd-dev doctest-dev nlohmann-json3-dev';
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, [
    `installing from Debian: ${pkgs}`,
    'dry run: apt-get update',
    `dry run: env DEBIAN_FRONTEND=noninteractive ${INSTALL} ${pkgs}`,
    '',
  ].join('\n'));
  assert.deepEqual(m.log(), [], 'a dry run calls no apt-get');
});

test('CI needs more than `npm start`: compilers, Node, git, Chromium, clang + libFuzzer, python3-sentencepiece (each package once)', () => {
  const m = machine({ tools: ['make', 'wasm-dis'], headers: ['doctest/doctest.h'] });
  const r = toolchain('ci', m, { ATTNLENS_DRY_RUN: '1' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^installing from Debian: cmake emscripten libxsimd-dev nlohmann-json3-dev g\+\+ nodejs npm git chromium clang libclang-rt-14-dev python3-sentencepiece\n/);
});

test('emcmake missing, as root: apt-get installs emscripten only', () => {
  const m = machine({ tools: ['cmake', 'make', 'wasm-dis'], headers: HEADERS });
  const r = toolchain('start', m);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(m.log(), ['apt-get update', `apt-get install -y --no-install-recommends emscripten`]);
});

test('a user with sudo: the same through sudo, DEBIAN_FRONTEND kept across sudo', () => {
  const m = machine({ tools: ['cmake', 'make', 'emcmake', 'em++'], headers: HEADERS.slice(1), uid: 1000, sudo: true });
  const r = toolchain('start', m);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(m.log(), [
    'sudo apt-get update',
    'apt-get update',
    `sudo env DEBIAN_FRONTEND=noninteractive ${INSTALL} binaryen libxsimd-dev`,
    `apt-get install -y --no-install-recommends binaryen libxsimd-dev`,
  ]);
});

test('cannot install (no sudo, or no apt-get, or apt-get fails): one line with the packages, exit 1', () => {
  const cases = [
    [{ uid: 1000 }, 'not root and no sudo'],
    [{ aptGet: false }, 'no apt-get on this machine'],
  ];
  for (const [opts, why] of cases) {
    const m = machine({ tools: ['cmake', 'make'], headers: HEADERS, ...opts });
    const r = toolchain('start', m);
    assert.equal(r.status, 1, why);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'attnlens needs these Debian packages: emscripten binaryen ' +
      `(${why}); as root run: apt-get install -y emscripten binaryen\n`);
    assert.deepEqual(m.log(), []);
  }
  const m = machine({ tools: START_TOOLS.slice(0, 4), headers: HEADERS });
  writeFileSync(path.join(m.env.PATH, 'apt-get'), `#!${BASH}\nexit 100\n`);
  const r = toolchain('start', m);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^attnlens needs these Debian packages: binaryen \(apt-get update failed\); as root run: apt-get install -y binaryen\n$/);
});

test('npm start (scripts/start.mjs) runs the check first: dry run, and a clear stop when it cannot install', () => {
  const start = (m, extra) => spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'start.mjs')],
    { env: { ...m.env, ...extra }, encoding: 'utf8', cwd: ROOT });
  const bare = machine({ tools: ['cmake', 'make', 'wasm-dis'], headers: HEADERS });
  const dry = start(bare, { ATTNLENS_DRY_RUN: '1' });
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`^installing from Debian: emscripten\\n.*\\ndry run: env DEBIAN_FRONTEND=noninteractive ${INSTALL} emscripten\\n`));
  // the page's "Your model" section needs the converted models' module too
  assert.match(dry.stdout, /dry run: would build build-wasm\/ \(attnlens_wasm, attnlens_hf_wasm\) and build-wasm-mt\/ \(attnlens_wasm\) and serve web\/\n$/);
  assert.deepEqual(bare.log(), []);

  const user = machine({ tools: ['cmake', 'make', 'wasm-dis'], headers: HEADERS, uid: 1000 });
  const r = start(user, {});
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '', 'no build, no server');
  assert.match(r.stderr, /^attnlens needs these Debian packages: emscripten \(not root and no sudo\)/);
});
