// The docs against the tree, as layers.test.mjs checks the arrows: docs/DESIGN.md's folder map (§2.2) lists exactly
// the tracked folders; README.md stays a short user document (≤ 20 KB) and neither it nor DESIGN.md carries dates,
// issue numbers or commit hashes; every relative link of README.md and docs/*.md resolves; and every example of the
// docs (README.md, docs/*.md, index.d.ts) shows the output it prints (they run in tests/e2e/consumers.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blockMode, collectExamples, dtsBlocks, expectedOutput, importedNames, markdownBlocks } from '../consumers/examples/extract.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p) => readFileSync(join(ROOT, p), 'utf8');

// The roots whose folders the map must list, and how deep (path components from the repository root).
const MAPPED_ROOTS = ['src', 'wasm', 'web', 'tests', 'scripts', 'bench', 'models/training'];
const MAX_DEPTH = 3;

/** Folders holding tracked files under the mapped roots, with their parents, down to MAX_DEPTH components. */
export function trackedFolders(paths) {
  const out = new Set();
  for (const file of paths) {
    for (let d = dirname(file); d !== '.' && d !== ''; d = dirname(d)) {
      const inRoot = MAPPED_ROOTS.some((r) => d === r || d.startsWith(`${r}/`));
      if (inRoot && d.split('/').length <= MAX_DEPTH) out.add(d);
    }
  }
  return out;
}

/** The first-column paths of the table under DESIGN.md's "### 2.2 Folder map" heading, without trailing '/'. */
export function folderMap(design) {
  const start = design.indexOf('\n### 2.2 Folder map');
  assert.ok(start >= 0, 'docs/DESIGN.md has no "### 2.2 Folder map" section');
  const rest = design.slice(start + 1);
  const end = rest.search(/\n#{2,3} /);
  const rows = rest.slice(0, end < 0 ? undefined : end).split('\n').filter((l) => /^\| `[^`]+` \|/.test(l));
  return rows.map((l) => l.match(/^\| `([^`]+)` \|/)[1].replace(/\/$/, ''));
}

/** Dates, issue numbers and commit hashes in a document's text, as [what, line number] pairs. */
export function diaryMarks(text) {
  const found = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\b\d{4}-\d{2}-\d{2}\b/g)) found.push([`date ${m[0]}`, i + 1]);
    for (const m of line.matchAll(/\bissues?\s+#?\d+/gi)) found.push([`"${m[0]}"`, i + 1]);
    // "#57" as an issue or pull-request reference, not a link anchor such as DESIGN.md#43-weight-precision.
    for (const m of line.matchAll(/(?<![\w/.#-])#\d+(?![\w-])/g)) found.push([`reference ${m[0]}`, i + 1]);
    // A commit hash: 7–40 hex digits with at least one letter and one digit, outside SHA-256 digests and URLs.
    for (const m of line.matchAll(/(?<![\w/.-])[0-9a-f]{7,40}(?![\w/-]|\.\w)/g)) {
      if (/[a-f]/.test(m[0]) && /\d/.test(m[0])) found.push([`commit-like ${m[0]}`, i + 1]);
    }
  });
  return found;
}

/** Relative link targets of a Markdown file ([text](target)), anchors stripped, resolved from its folder. */
export function relativeLinks(file, text) {
  const links = [];
  const body = text.replace(/```[\s\S]*?```/g, '');
  for (const m of body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const path = decodeURIComponent(target.split('#')[0]);
    links.push({ target, path: resolve(dirname(join(ROOT, file)), path) });
  }
  return links;
}

test('docs/DESIGN.md folder map matches the tracked folders', () => {
  const tracked = trackedFolders(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'));
  assert.ok(tracked.has('src/attention') && tracked.has('models/training'), 'git ls-files gave the tree');
  const listed = folderMap(read('docs/DESIGN.md'));
  const generic = (p) => p.includes('<');
  const missingOnDisk = listed.filter((p) => !generic(p) && !existsSync(join(ROOT, p)));
  assert.deepEqual(missingOnDisk, [], 'folders listed in docs/DESIGN.md §2.2 that do not exist');
  const unlisted = [...tracked].filter((d) => !listed.includes(d)).sort();
  assert.deepEqual(unlisted, [], 'tracked folders missing from docs/DESIGN.md §2.2 (add a row for each)');
});

test('the folder-map checks can fail', () => {
  const tracked = trackedFolders(['src/new/deep/a.cpp', 'docs/x.md', 'models/training/x/y/z/w.py']);
  assert.deepEqual([...tracked].sort(), ['models/training', 'models/training/x', 'src', 'src/new', 'src/new/deep']);
  const map = folderMap('## 2\n### 2.2 Folder map\n\n| folder | role |\n|---|---|\n| `src/` | a |\n| `src/io/` | b |\n### 2.3 next\n| `web/` | c |\n');
  assert.deepEqual(map, ['src', 'src/io']);
});

test('README.md is at most 20 KB', () => {
  const bytes = statSync(join(ROOT, 'README.md')).size;
  assert.ok(bytes <= 20 * 1024, `README.md is ${bytes} bytes, over 20 KB: move details to docs/USING.md`);
});

test('README.md and docs/DESIGN.md carry no dates, issue numbers or commit hashes', () => {
  for (const file of ['README.md', 'docs/DESIGN.md']) {
    assert.deepEqual(diaryMarks(read(file)), [], `${file}: [what, line]`);
  }
  assert.equal(diaryMarks('Measured on 2026-11-29 (issue 15, see #57) at e384aca.').length, 4, 'the check itself finds all four');
  assert.deepEqual(diaryMarks('SHA-256 of weights.safetensors; 8980464 bytes; §4.3; [x](DESIGN.md#43-weight-precision-int8)'), []);
});

test('every relative link in README.md and docs/*.md resolves to a file in the repository', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const broken = [];
  for (const file of files) {
    for (const { target, path } of relativeLinks(file, read(file))) {
      if (!path.startsWith(ROOT) || !existsSync(path)) broken.push(`${file}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
  assert.equal(relativeLinks('README.md', '[a](no/such/file.md) [b](https://x.org) [c](#anchor)').length, 1);
});

// The examples themselves run in tests/e2e/consumers.test.mjs, in a fresh project where the packed tarball is
// installed (tests/consumers/examples/); here, the reader of them and what every example must show.
test('every example of the docs shows what it prints, or says it is for a browser or a bundler', () => {
  const found = collectExamples(ROOT);
  assert.ok(found.filter((e) => e.file === 'README.md').length >= 5, 'the README shows the package in runnable examples');
  assert.ok(found.some((e) => e.file === 'wasm/index.d.ts'), 'index.d.ts has @example blocks');
  for (const e of found) {
    if (e.mode === 'node') assert.ok(e.expected.length > 0, `${e.id}: show the output in // comments under console.log`);
    assert.match(e.code, /from 'attnlens'/, `${e.id} imports the package`);
  }
});

test('the example reader: Markdown and @example blocks, their output comments, their mode', () => {
  const md = "text\n```js\nimport { x } from 'attnlens';\nconsole.log(1);\n// 1\nconsole.log(2, 3); // not output\n// 2 3\n```\n" +
    "```js\nno import\n```\n- item\n\n  ```js\n  // In a browser:\n  import { y as z } from 'attnlens';\n  ```\n";
  const blocks = markdownBlocks(md);
  assert.deepEqual(blocks.map((b) => b.line), [3, 15]);
  assert.deepEqual(expectedOutput(blocks[0].code), ['1', '2 3']);
  assert.deepEqual(blockMode(blocks[0].code), { mode: 'node', cwd: 'project' });
  assert.equal(blocks[1].code, "// In a browser:\nimport { y as z } from 'attnlens';\n");
  assert.deepEqual(blockMode(blocks[1].code), { mode: 'syntax', cwd: 'project' });
  assert.deepEqual(importedNames(blocks[1].code), ['y']);
  assert.deepEqual(blockMode('// A bundle folder: run from the repository root.\n').cwd, 'repository');
  const dts = '/**\n * Does x.\n * @example\n * import { x } from \'attnlens\';\n *\n * console.log(x());\n * // 42\n * @returns y\n */\n' +
    '/** @example\n * console.log(1);\n * // 1\n */';
  const ex = dtsBlocks(dts);
  assert.deepEqual(ex.map((b) => b.line), [4, 11]);
  assert.equal(ex[0].code, "import { x } from 'attnlens';\n\nconsole.log(x());\n// 42\n");
  assert.deepEqual(expectedOutput(ex[1].code), ['1']);
});
