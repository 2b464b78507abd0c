// The service worker's app shell (web/sw.js SHELL) lists every module the page can import, so that a first visit
// followed by an offline reload starts: each web/**/*.js (but sw.js itself) and each module of the package's entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEB = path.join(ROOT, 'web');

function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'screenshots' || name === 'examples' ? [] : jsFiles(p);
    return name.endsWith('.js') ? [p] : [];
  });
}

test('web/sw.js caches every page module and every package module', () => {
  const src = readFileSync(path.join(WEB, 'sw.js'), 'utf8');
  const shell = new Set([...src.match(/const SHELL = \[([\s\S]*?)\];/)[1].matchAll(/'([^']+)'/g)].map((m) => path.resolve(WEB, m[1])));
  const wanted = [
    ...jsFiles(WEB).filter((f) => path.basename(f) !== 'sw.js'),
    // wasm/node-runner-pre.js belongs to the Node test runner build and wasm/threads-pre.js is linked into the
    // threaded module (wasm/dist-mt/), not served on their own.
    ...jsFiles(path.join(ROOT, 'wasm')).filter((f) => (!f.includes(`${path.sep}dist${path.sep}`) || f.endsWith('attnlens.js')) &&
      !f.endsWith('node-runner-pre.js') && !f.endsWith('threads-pre.js')),
  ];
  const missing = wanted.filter((f) => !shell.has(f)).map((f) => path.relative(ROOT, f));
  assert.deepEqual(missing, [], 'add these to SHELL in web/sw.js');
  for (const f of shell) assert.ok(statSync(f, { throwIfNoEntry: false }), `${path.relative(ROOT, f)} in SHELL does not exist`);
});
