#!/usr/bin/env node
// Builds what is missing or out of date: the native tree (build/, g++) and the WASM tree (build-wasm/, em++),
// whose package module lands in wasm/dist/. CMake's own dependency tracking makes a second run cheap.
//
//   node scripts/build.mjs            native + wasm
//   node scripts/build.mjs native     native only
//   node scripts/build.mjs wasm       wasm only (the npm package's two modules — single-threaded and threaded,
//                                     build-wasm-mt/ → wasm/dist-mt/ — the WASM tests and benchmarks)
//   node scripts/build.mjs asan       native with AddressSanitizer + UBSan (build-asan/)
//   node scripts/build.mjs fuzz       the libFuzzer harnesses of tests/fuzz (clang, ASan + UBSan; build-fuzz/)
//
// Parallelism defaults to 2 jobs (the team machine has two cores); override with ATTNLENS_JOBS.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const JOBS = String(process.env.ATTNLENS_JOBS || 2);

// Emscripten 3.1.6 links at -O2/-O3 through its JS optimizer, which needs Debian's acorn (TOOLCHAIN.md).
const buildEnv = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' };

/** Runs a command with inherited stdio; throws an Error naming the command when it fails. */
export function run(cmd, args, options = {}) {
  const shown = [cmd, ...args].join(' ');
  console.log(`$ ${shown}`);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env: buildEnv, ...options });
  if (r.error) {
    throw new Error(r.error.code === 'ENOENT'
      ? `'${cmd}' was not found: install the toolchain (scripts/toolchain.sh lists the Debian packages; npm start installs them)`
      : `${shown}: ${r.error.message}`);
  }
  if (r.status !== 0) throw new Error(`${shown} exited with status ${r.status ?? r.signal}`);
}

const TREES = {
  native: { dir: 'build', configure: ['cmake', []] },
  asan: { dir: 'build-asan', configure: ['cmake', ['-DATTNLENS_SANITIZE=ON']] },
  wasm: { dir: 'build-wasm', configure: ['emcmake', ['cmake']] },
  // The package's threaded module only (wasm/dist-mt/); `wasm` builds it too.
  'wasm-mt': { dir: 'build-wasm-mt', configure: ['emcmake', ['cmake', '-DATTNLENS_WASM_THREADS=ON']], targets: ['attnlens_wasm'] },
  fuzz: { dir: 'build-fuzz', configure: ['cmake', ['-DCMAKE_CXX_COMPILER=clang++', '-DATTNLENS_FUZZ=ON', '-DATTNLENS_WERROR=OFF']] },
};

/** Configures `kind` when it has never been configured (or its last configure failed: a cache but no build files,
 * as a missing package leaves it), then builds it (all targets, or only `targets`). The
 * `wasm` kind also builds the threaded module (`wasm-mt`), which the package loads where threads can run. */
export function buildTree(kind, { targets = [] } = {}) {
  const tree = TREES[kind];
  if (!tree) throw new Error(`unknown build '${kind}'; expected one of: ${Object.keys(TREES).join(', ')}`);
  if (kind === 'wasm') buildTree('wasm-mt');
  if (targets.length === 0 && tree.targets) targets = tree.targets;
  const configured = ['Makefile', 'build.ninja'].some((f) => existsSync(path.join(ROOT, tree.dir, f)));
  if (!configured || !existsSync(path.join(ROOT, tree.dir, 'CMakeCache.txt'))) {
    const [cmd, pre] = tree.configure;
    run(cmd, [...pre, '-S', '.', '-B', tree.dir, '-DCMAKE_BUILD_TYPE=Release']);
  }
  run('cmake', ['--build', tree.dir, '-j', JOBS, ...targets.flatMap((t) => ['--target', t])]);
  return path.join(ROOT, tree.dir);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const kinds = process.argv.length > 2 ? process.argv.slice(2) : ['native', 'wasm'];
  try {
    for (const kind of kinds) buildTree(kind);
  } catch (err) {
    console.error(`build failed: ${err.message}`);
    process.exit(1);
  }
}
