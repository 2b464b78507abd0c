// Runs every example of the attnlens repository at ROOT (extract.mjs: README.md, docs/*.md, wasm/index.d.ts) in this
// project, where the packed tarball is installed — `import ... from 'attnlens'` resolves to node_modules/attnlens,
// as it does for a user — and prints one JSON line: per example its id, mode, exit status, stdout, stderr and the
// output its comments promise. Node examples run as written (file ex-<n>.mjs in this folder, working folder this
// project or, for those that say so, ROOT); browser and bundler examples are syntax-checked (node --check) and the
// names they import must be exports of the installed package.
//
//   node run.mjs ROOT
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectExamples, importedNames } from './extract.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(process.argv[2] ?? '');
const exported = new Set(Object.keys(await import('attnlens')));
const scratch = path.join(HERE, 'examples');
mkdirSync(scratch, { recursive: true });

const results = collectExamples(root).map((ex, i) => {
  const file = path.join(scratch, `ex-${i + 1}.mjs`);
  writeFileSync(file, ex.code);
  const args = ex.mode === 'syntax' ? ['--check', file] : [file];
  const cwd = ex.cwd === 'repository' ? root : HERE;
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 300_000 });
  const missing = importedNames(ex.code).filter((n) => !exported.has(n));
  return {
    id: ex.id, mode: ex.mode, cwd: ex.cwd, status: r.status ?? String(r.signal ?? r.error), stdout: r.stdout,
    stderr: r.stderr, expected: ex.expected, missingImports: missing,
  };
});
console.log(JSON.stringify(results));
