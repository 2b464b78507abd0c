// The package's examples, read from the documents themselves so that an edited example is a tested example: the
// ```js blocks of README.md and docs/*.md that import 'attnlens', and the @example blocks of wasm/index.d.ts's doc
// comments. Each comes with the output it promises: the `// ` comment lines right under a console.log line.
// A block whose first line is a comment naming a browser or a bundler is only syntax-checked; one whose first line
// says "from the repository root" runs with the repository root as its working folder. tests/consumers/examples/
// run.mjs runs them in a fresh project; tests/node/docs.test.mjs checks the reader itself.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const IMPORTS_PACKAGE = /\bfrom 'attnlens'/;

/** Line number (from 1) of character `offset` in `text`. */
const lineOf = (text, offset) => text.slice(0, offset).split('\n').length;

/**
 * The ```js blocks of a Markdown text that import 'attnlens': [{ code, line }] (line: the block's first code line).
 * A fence indented under a list item counts too, its code taken without the indent.
 */
export function markdownBlocks(markdown) {
  return [...markdown.matchAll(/^( *)```js\n([\s\S]*?)^\1```/gm)]
    .filter((m) => IMPORTS_PACKAGE.test(m[2]))
    .map((m) => ({
      code: m[2].split('\n').map((l) => (l.startsWith(m[1]) ? l.slice(m[1].length) : l)).join('\n'),
      line: lineOf(markdown, m.index) + 1,
    }));
}

/**
 * The @example blocks of the doc comments of a TypeScript declaration file: [{ code, line }]. A block runs from the
 * line after `@example` to the next `@tag` line or the end of the comment, each line without its leading ` * `.
 */
export function dtsBlocks(text) {
  const blocks = [];
  for (const c of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const lines = c[0].split('\n');
    const first = lineOf(text, c.index);
    lines.forEach((l, i) => {
      if (!/^\s*(\/\*\*|\*)\s*@example\b/.test(l)) return;
      const code = [];
      for (let k = i + 1; k < lines.length; k++) {
        const body = lines[k].replace(/\*\/\s*$/, '').replace(/^\s*\* ?/, '');
        if (/^\s*@\w/.test(body) || /^\s*\*\/\s*$/.test(lines[k])) break;
        code.push(body);
        if (/\*\/\s*$/.test(lines[k])) break;
      }
      while (code.length && code[code.length - 1].trim() === '') code.pop();
      blocks.push({ code: `${code.join('\n')}\n`, line: first + i + 1 });
    });
  }
  return blocks;
}

/** The output a block promises: the `// ` comment lines right under each console.log line, in order. */
export function expectedOutput(code) {
  const lines = code.split('\n');
  const expected = [];
  lines.forEach((line, i) => {
    if (!/console\.log\(/.test(line)) return;
    for (let k = i + 1; k < lines.length && lines[k].startsWith('// '); k++) expected.push(lines[k].slice(3));
  });
  return expected;
}

/**
 * How a block is checked, from its first line: 'syntax' when it is a comment naming a browser or a bundler, else
 * 'node'; cwd 'repository' when that comment says "from the repository root", else 'project'.
 */
export function blockMode(code) {
  const first = code.split('\n', 1)[0];
  const comment = /^\s*\/\//.test(first) ? first : '';
  return {
    mode: /\b(browser|bundler)\b/i.test(comment) ? 'syntax' : 'node',
    cwd: /\bfrom the repository root\b/i.test(comment) ? 'repository' : 'project',
  };
}

/** The names a block imports from 'attnlens' (`import { a, b as c } from 'attnlens'` → ['a', 'b']). */
export function importedNames(code) {
  return [...code.matchAll(/import\s*\{([^}]*)\}\s*from 'attnlens'/g)]
    .flatMap((m) => m[1].split(',').map((s) => s.trim().split(/\s+as\s+/)[0]).filter(Boolean));
}

/** The Markdown files with examples: README.md and docs/*.md, relative to `root`. */
export function documents(root) {
  const docs = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** Every example of the repository at `root`: [{ id: 'README.md:75', file, line, code, expected, mode, cwd }]. */
export function collectExamples(root) {
  const read = (f) => readFileSync(path.join(root, f), 'utf8');
  const found = [
    ...documents(root).flatMap((file) => markdownBlocks(read(file)).map((b) => ({ file, ...b }))),
    ...dtsBlocks(read('wasm/index.d.ts')).map((b) => ({ file: 'wasm/index.d.ts', ...b })),
  ];
  return found.map((b) => ({ id: `${b.file}:${b.line}`, ...b, expected: expectedOutput(b.code), ...blockMode(b.code) }));
}
