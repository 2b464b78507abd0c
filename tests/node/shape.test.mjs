// No function in web/ or wasm/ (the page and the package's JS; not the generated wasm/dist*) is longer than MAX_LINES
// lines: a function that grows past it is split into parts with names. The scan is a small lexer (strings, template
// literals, comments and regular expressions are skipped, so the braces inside them do not count) and a brace
// matcher that finds the bodies of function declarations and expressions, methods, and arrow functions with a block
// body, and measures each from its opening to its closing brace. The scanner is itself tested on a small example
// first, so that a scanner that finds nothing cannot make the check pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_LINES = 120;

// Functions over the limit that are known ('file:name', with their length today). Each entry is a debt: the test
// fails when a listed function is gone or within the limit, so that the list only shrinks. It is empty.
const ALLOWED = new Map([]);

const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'with', 'return', 'typeof', 'function']);
// After these tokens a '/' starts a regular expression (else it divides).
const REGEX_AFTER = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>',
  '~', '^', '=>', '&&', '||', '??', 'return', 'typeof', 'case', 'of', 'in', 'void', 'delete', 'throw', 'new', '']);

/** The significant tokens of JS source: { t: text, line } for identifiers, punctuation; strings etc. as one token. */
export function tokenize(src) {
  const out = [];
  let i = 0;
  let line = 1;
  const braces = []; // per open '{': whether it is a template literal's '${'
  const prev = () => (out.length ? out[out.length - 1].t : '');
  const push = (t) => out.push({ t, line });
  const skipString = (q) => {
    for (i++; i < src.length && src[i] !== q; i++) {
      if (src[i] === '\\') i++;
      else if (src[i] === '\n') line++;
    }
    i++;
  };
  // A template literal from i (just after '`' or after the '}' that ends a '${'): stops after '`' or after '${'.
  const skipTemplate = () => {
    for (; i < src.length; i++) {
      const c = src[i];
      if (c === '\\') { i++; continue; }
      if (c === '\n') line++;
      if (c === '`') { i++; return; }
      if (c === '$' && src[i + 1] === '{') { i += 2; braces.push(true); push('${'); return; }
    }
  };
  while (i < src.length) {
    const c = src[i];
    if (c === '\n') { line++; i++; continue; }
    if (/\s/.test(c)) { i++; continue; }
    if (c === '/' && src[i + 1] === '/') { while (i < src.length && src[i] !== '\n') i++; continue; }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      for (; i < stop; i++) if (src[i] === '\n') line++;
      continue;
    }
    if (c === '"' || c === "'") { skipString(c); push('str'); continue; }
    if (c === '`') { i++; push('str'); skipTemplate(); continue; }
    if (c === '/' && REGEX_AFTER.has(prev())) {
      let cls = false;
      for (i++; i < src.length && (cls || src[i] !== '/'); i++) {
        if (src[i] === '\\') i++;
        else if (src[i] === '[') cls = true;
        else if (src[i] === ']') cls = false;
        else if (src[i] === '\n') break; // not a regular expression after all
      }
      i++;
      while (/[a-z]/i.test(src[i] ?? '')) i++;
      push('re');
      continue;
    }
    const id = /^[A-Za-z_$][\w$]*/.exec(src.slice(i, i + 64));
    if (id) { push(id[0]); i += id[0].length; continue; }
    const num = /^\d[\w.]*/.exec(src.slice(i, i + 64));
    if (num) { push('num'); i += num[0].length; continue; }
    const op = /^(=>|&&|\|\||\?\?|\.\.\.)/.exec(src.slice(i, i + 3));
    if (op) { push(op[0]); i += op[0].length; continue; }
    if (c === '{') { braces.push(false); push('{'); i++; continue; }
    if (c === '}') {
      if (braces.pop()) { i++; push('`}'); skipTemplate(); continue; } // the end of a '${…}'
      push('}');
      i++;
      continue;
    }
    push(c);
    i++;
  }
  return out;
}

/** [{ name, line, lines }] of every function body in `src` (declarations, expressions, methods, block arrows). */
export function functions(src) {
  const toks = tokenize(src);
  const match = new Map(); // index of '(' / '{' / '${' → index of its closing token
  const stack = [];
  toks.forEach((tok, k) => {
    if (tok.t === '(' || tok.t === '{' || tok.t === '${') stack.push(k);
    else if (tok.t === ')' || tok.t === '}' || tok.t === '`}') match.set(stack.pop(), k);
  });
  const openParen = new Map([...match].filter(([o]) => toks[o].t === '(').map(([o, c]) => [c, o]));
  const found = [];
  toks.forEach((tok, k) => {
    if (tok.t !== '{' || !match.has(k)) return;
    let name = null;
    const before = toks[k - 1]?.t;
    if (before === '=>') {
      // (args) => {  or  x => {  ; named after `const name =` / `name:` when there is one
      let s = k - 2;
      if (toks[s]?.t === ')') s = openParen.get(s) ?? s;
      if (toks[s - 1]?.t === 'async') s--;
      const [a, b] = [toks[s - 1]?.t, toks[s - 2]?.t];
      name = (a === '=' || a === ':') && /^[\w$]+$/.test(b ?? '') ? b : '(arrow)';
    } else if (before === ')' && openParen.has(k - 1)) {
      const o = openParen.get(k - 1);
      const head = toks[o - 1]?.t ?? '';
      if (head === 'function') name = '(function)';
      else if (/^[A-Za-z_$][\w$]*$/.test(head) && !KEYWORDS.has(head)) name = head;
      else if (head === '*' && toks[o - 2]?.t === 'function') name = '(function)';
    }
    if (!name) return;
    const end = toks[match.get(k)];
    found.push({ name, line: tok.line, lines: end.line - tok.line + 1 });
  });
  return found;
}

function jsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (!/^(dist.*|node_modules|screenshots|examples)$/.test(name)) out.push(...jsFiles(p));
    } else if (name.endsWith('.js') || name.endsWith('.mjs')) out.push(p);
  }
  return out;
}

test('the scanner finds and measures functions of every form, and skips braces in strings and regexes', () => {
  const body = (n) => Array.from({ length: n }, (_, i) => `  x += ${i}; // {`).join('\n');
  const src = [
    'const s = "}}}"; const t = `a ${"{"} b ${`c ${1}`} }`; const re = /[}{]+\\//g;',
    `function long(a, b) {\n${body(121)}\n}`, // 123 lines with its braces
    `export async function short() {\n${body(3)}\n}`,
    `const arrow = async (x) => {\n  if (x) { return x / 2; }\n${body(130)}\n};`,
    'class K {\n  method(a) {\n    for (const v of a) { v.y = (w) => { return w; }; }\n  }\n}',
    'const o = { key: () => { return 1; }, other(q) { return { a: q }; } };',
    'const e = (y) => y + 1; if (e(1)) { while (false) {} }',
    '[1].map((z) => {\n  return z;\n});',
  ].join('\n');
  const fns = functions(src);
  const by = Object.fromEntries(fns.map((f) => [f.name, f]));
  assert.equal(by.long?.lines, 123);
  assert.equal(by.short?.lines, 5);
  assert.equal(by.arrow?.lines, 133);
  assert.equal(by.method?.lines, 3);
  assert.equal(by.key?.lines, 1);
  assert.equal(by.other?.lines, 1);
  assert.equal(by.y?.lines, 1, 'an arrow assigned to a property is named after it');
  assert.ok(fns.some((f) => f.name === '(arrow)' && f.lines === 3), 'an anonymous arrow is found');
  assert.ok(!fns.some((f) => ['if', 'while', 'for', 'e'].includes(f.name)), 'blocks and expression arrows are not functions');
  assert.deepEqual(fns.filter((f) => f.lines > MAX_LINES).map((f) => f.name).sort(), ['arrow', 'long']);
});

test(`no function in web/ or wasm/ is longer than ${MAX_LINES} lines`, () => {
  const files = [...jsFiles(join(ROOT, 'web')), ...jsFiles(join(ROOT, 'wasm'))];
  assert.ok(files.length > 20, `the page's and the package's files are read (${files.length})`);
  const long = [];
  let total = 0;
  for (const f of files) {
    const rel = relative(ROOT, f);
    for (const fn of functions(readFileSync(f, 'utf8'))) {
      total++;
      if (fn.lines > MAX_LINES) long.push({ key: `${rel}:${fn.name}`, where: `${rel}:${fn.line} ${fn.name}`, lines: fn.lines });
    }
  }
  assert.ok(total > 200, `functions are found (${total})`);
  const over = long.filter((f) => !ALLOWED.has(f.key));
  assert.deepEqual(over.map((f) => `${f.where} (${f.lines} lines)`), [], 'functions over the limit: split them');
  const stale = [...ALLOWED.keys()].filter((k) => !long.some((f) => f.key === k));
  assert.deepEqual(stale, [], 'allowed functions that are now within the limit (or gone): remove them from ALLOWED');
});
