// The docs against the tree, as layers.test.mjs checks the arrows: docs/DESIGN.md's folder map (§2.2) lists exactly
// the tracked folders; README.md stays a short user document (≤ 20 KB) and neither it nor DESIGN.md carries dates,
// issue numbers or commit hashes; every relative link of README.md and docs/*.md resolves; and every ```js example
// of the README that imports 'attnlens' runs against this checkout's package and prints what its comments say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/** The ```js blocks of a Markdown text that import 'attnlens', each with the output its comments promise. */
export function examples(markdown) {
  return [...markdown.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
    .filter((code) => /from 'attnlens'/.test(code))
    .map((code) => {
      const lines = code.split('\n');
      const expected = [];
      lines.forEach((line, i) => {
        if (!/console\.log\(/.test(line)) return;
        for (let k = i + 1; k < lines.length && lines[k].startsWith('// '); k++) expected.push(lines[k].slice(3));
      });
      return { code, expected };
    });
}

const WASM_BUILT = existsSync(join(ROOT, 'wasm/dist/attnlens.wasm'));

test('every README example that imports attnlens prints what its comments say', { skip: !WASM_BUILT && 'wasm/dist not built' }, () => {
  const blocks = examples(read('README.md'));
  assert.ok(blocks.length >= 3, 'the README shows the package in runnable examples');
  const dir = mkdtempSync(join(tmpdir(), 'attnlens-readme-'));
  const entry = pathToFileURL(join(ROOT, 'wasm/index.js')).href;
  try {
    blocks.forEach(({ code, expected }, i) => {
      assert.ok(expected.length > 0, `example ${i + 1} shows its output in comments after console.log`);
      const file = join(dir, `example-${i + 1}.mjs`);
      writeFileSync(file, code.replaceAll("from 'attnlens'", `from '${entry}'`));
      const r = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
      assert.equal(r.status, 0, `example ${i + 1} (${relative(ROOT, file)}) failed:\n${r.stderr}`);
      assert.deepEqual(r.stdout.trimEnd().split('\n'), expected, `example ${i + 1}: printed output against its comments`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the example reader pairs each console.log with the comment lines under it', () => {
  const [ex] = examples("```js\nimport { x } from 'attnlens';\nconsole.log(1);\n// 1\nconsole.log(2, 3);\n// 2 3\n```\n```js\nno import\n```");
  assert.deepEqual(ex.expected, ['1', '2 3']);
});
