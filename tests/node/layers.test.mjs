// The one-way arrows of docs/DESIGN.md §2.1, read from the sources: every `#include "…"` under src/ and wasm/, and
// every import of web/ and of the package's modules. A layer of the main chain (kernels → attention → nn → models →
// api) may use the layers to its left and (but for kernels/) the side modules; a side module only what the table below gives it; the
// CLI and the Embind bindings only the public API; the page only the package's public entry. A new include that
// points the wrong way fails here with the file and line that added it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const CHAIN = ['kernels', 'attention', 'nn', 'models', 'api'];
// Side modules: what each may use besides common.h and itself (DESIGN.md §2.1).
const SIDE = {
  trace: [],
  text: [],
  image: [],
  io: ['kernels'], // a bundle's matrices are read straight into the kernels' packed (float32 or int8) form
  analysis: ['text'], // number copying reads the word spans of text/
  decode: ['kernels'],
};

function files(dir, exts) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'dist' && name !== 'dist-mt' && name !== 'node_modules') out.push(...files(p, exts));
    } else if (exts.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

// [{ line, target }] of a C++ file's quoted includes, each resolved to a path under src/ (or wasm/ for the
// bindings' own header) as the compiler's include path (src/, then the file's folder) finds it.
function includes(file) {
  const out = [];
  readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    const m = /^\s*#\s*include\s+"([^"]+)"/.exec(text);
    if (!m) return;
    const local = resolve(dirname(file), m[1]);
    const fromSrc = resolve(ROOT, 'src', m[1]);
    const target = existsSync(local) ? local : existsSync(fromSrc) ? fromSrc : null;
    out.push({ line: i + 1, spelled: m[1], target: target && relative(ROOT, target) });
  });
  return out;
}

// The module of a path under src/: its first folder ("kernels", "api", …), or the file itself at the top ("common.h").
const moduleOf = (path) => relative('src', path).split('/')[0];

function allowed(from) {
  if (from === 'common.h') return new Set(['common.h']);
  if (from === 'api.h') return new Set(['api.h', 'api']);
  if (from === 'cli') return new Set(['cli', 'common.h', 'api.h']);
  const own = new Set([from, 'common.h']);
  if (from in SIDE) return new Set([...own, ...SIDE[from]]);
  const at = CHAIN.indexOf(from);
  assert.ok(at >= 0, `src/${from} is neither on the main chain nor a side module: add it to this test and to DESIGN.md §2.1`);
  // kernels/ is the bottom: side modules build on it (io/, decode/), so it uses none of them.
  return new Set([...own, ...CHAIN.slice(0, at), ...(from === 'kernels' ? [] : Object.keys(SIDE))]);
}

test('src/: every include points along the one-way arrows', () => {
  const wrong = [];
  const seen = new Set();
  for (const file of files(join(ROOT, 'src'), ['.h', '.cpp'])) {
    const rel = relative(ROOT, file);
    const from = moduleOf(rel);
    seen.add(from);
    for (const inc of includes(file)) {
      if (!inc.target) {
        wrong.push(`${rel}:${inc.line} includes "${inc.spelled}", which is not in src/ nor beside the file`);
        continue;
      }
      const to = moduleOf(inc.target);
      if (!allowed(from).has(to)) wrong.push(`${rel}:${inc.line} (${from}) includes ${inc.target} (${to})`);
    }
  }
  assert.deepEqual(wrong, []);
  // The check saw the whole tree: every module of the chain and every side module has sources.
  for (const m of [...CHAIN, ...Object.keys(SIDE), 'cli']) assert.ok(seen.has(m), `no sources read for src/${m}`);
});

test('wasm/: the bindings use the public API only (api.h) and the image checks of image/', () => {
  const wrong = [];
  const sources = files(join(ROOT, 'wasm'), ['.h', '.cpp']);
  assert.ok(sources.length >= 7, `${sources.length} binding sources`);
  for (const file of sources) {
    const rel = relative(ROOT, file);
    for (const inc of includes(file)) {
      const ok = inc.target === 'wasm/bindings_common.h' || inc.target === 'src/api.h' ||
        (inc.target !== null && inc.target.startsWith('src/image/'));
      if (!ok) wrong.push(`${rel}:${inc.line} includes "${inc.spelled}"`);
    }
  }
  assert.deepEqual(wrong, []);
});

// [{ line, spec }] of a JS/HTML file's static and dynamic imports (and workers' module URLs).
function imports(file) {
  const out = [];
  readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    if (/^\s*(\/\/|\*)/.test(text)) return; // comments (the docs show `from 'attnlens'`)
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new\s+(?:Shared)?Worker\(\s*(?:new URL\(\s*)?)(['"])([^'"]+)\1/g)) {
      out.push({ line: i + 1, spec: m[2] });
    }
  });
  return out;
}

test('web/: the page imports the package through its public entry (wasm/index.js) only', () => {
  const wrong = [];
  let entry = 0;
  const sources = files(join(ROOT, 'web'), ['.js', '.mjs']);
  assert.ok(sources.length >= 20, `${sources.length} page modules`);
  for (const file of sources) {
    const rel = relative(ROOT, file);
    for (const { line, spec } of imports(file)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, resolve(dirname(file), spec));
      if (target === 'wasm/index.js') entry++;
      else if (!target.startsWith('web/')) wrong.push(`${rel}:${line} imports ${spec} (${target})`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.ok(entry >= 1, 'no page module imports wasm/index.js');
});

test('wasm/*.js: the package never imports the page', () => {
  const wrong = [];
  for (const file of files(join(ROOT, 'wasm'), ['.js', '.mjs'])) {
    const rel = relative(ROOT, file);
    for (const { line, spec } of imports(file)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, resolve(dirname(file), spec));
      if (!target.startsWith('wasm/')) wrong.push(`${rel}:${line} imports ${spec} (${target})`);
    }
  }
  assert.deepEqual(wrong, []);
});
