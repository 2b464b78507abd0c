// The package as users install it: `npm run pack` (scripts/pack.mjs) makes the tarball, and three fresh projects (tests/consumers/) install
// it from that tarball — never from the repo — then use it: a Node 20 app runs each task with the package's own
// models, a TypeScript consumer type-checks (tsc --noEmit), and a Vite app is built and runs each task in Chromium.
// Installs are offline-safe: the tarball has no dependencies, and the Vite app's are pinned by its package-lock.json
// (npm ci --prefer-offline uses the npm cache when it holds them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ROOT, ARTIFACTS, CHROMIUM, hasBundle, launch, watchProblems } from './helpers.mjs';
import { TASKS } from '../../wasm/pipeline.js';
import { INT8_IN_PACKAGE, pack } from '../../scripts/pack.mjs';

// The consumers translate 'Zwei Kinder mit gelben Jacken spielen im Schlamm.' (tests/consumers/*): PyTorch's beam-4
// output for it is a case of the default translator's goldens (de-en-general).
const GOLDEN_TRANSLATION = JSON.parse(readFileSync(path.join(ROOT, 'models', 'de-en-general', 'golden.json'), 'utf8'))
  .cases.find((c) => c.source === 'Zwei Kinder mit gelben Jacken spielen im Schlamm.').beam4.text;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const taskModule = { 'sentiment-analysis': 'sentiment', translation: 'translation', 'image-to-text': 'captioning',
  'visual-question-answering': 'vqa' };
// A task runs in a consumer when its module and its default model are in the package.
const shipped = (task, model) => existsSync(path.join(ROOT, 'wasm', 'pipelines', `${taskModule[task]}.js`)) && hasBundle(model);

let work;
let tarball;

function sh(cmd, args, cwd, { timeout = 240_000 } = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed with ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

function copyConsumer(name) {
  const dest = path.join(work, name);
  cpSync(path.join(ROOT, 'tests', 'consumers', name), dest, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}node_modules`) && !src.includes(`${path.sep}dist`),
  });
  return dest;
}

/** Checks one consumer's per-task results against the goldens (or a clear error for tasks this build lacks). */
function checkResults(results, where) {
  for (const r of results.filter((x) => x.task)) {
    if (r.local) {
      assert.equal(r.label, 'NEGATIVE', `${where}: local_files_only run`);
      continue;
    }
    if (!shipped(r.task, r.model)) {
      assert.ok(r.error, `${where}: ${r.task} has no shipped model, so it must fail with a clear error`);
      assert.match(r.error, /attnlens|model|fetch|import|module/i, `${where}: ${r.error}`);
      continue;
    }
    assert.equal(r.error, undefined, `${where}: ${r.task} failed: ${r.error}`);
    if (r.task === 'sentiment-analysis') assert.equal(r.label, 'POSITIVE', `${where}: sentiment label`);
    if (r.task === 'translation') assert.equal(r.text, GOLDEN_TRANSLATION, `${where}: translation`);
    if (r.task === 'image-to-text') assert.ok(typeof r.text === 'string' && r.text.split(' ').length >= 2, `${where}: caption ${r.text}`);
    if (r.task === 'visual-question-answering') assert.ok(typeof r.answer === 'string' && r.answer.length > 0, `${where}: answer ${r.answer}`);
    const maps = Array.isArray(r.maps) ? r.maps.length : r.maps;
    assert.ok(maps > 0, `${where}: ${r.task} returns attention maps`);
  }
}

before(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'attnlens-consumers-'));
  // The published tarball (scripts/pack.mjs: the package's files with int8 bundles); no build: `npm test` has just
  // built wasm/dist.
  const packed = pack({ destination: work, build: false });
  tarball = packed.tarball;
  assert.ok(existsSync(tarball));
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('npm pack: the tarball holds the module, the types and the default models', () => {
  const listing = sh('tar', ['-tzf', tarball], work).split('\n');
  for (const f of ['package/wasm/index.js', 'package/wasm/index.d.ts', 'package/wasm/dist/attnlens.wasm',
    'package/wasm/dist/attnlens.js', 'package/wasm/pipeline.js', 'package/wasm/models.js']) {
    assert.ok(listing.includes(f), `${f} is in the tarball`);
  }
  for (const task of Object.keys(taskModule)) {
    const f = `package/wasm/pipelines/${taskModule[task]}.js`;
    if (existsSync(path.join(ROOT, f.slice('package/'.length)))) assert.ok(listing.includes(f), `${f} is in the tarball`);
  }
  const notPackaged = Object.values(TASKS).flatMap((t) => t.notPackaged ?? []);
  for (const name of readdirSync(path.join(ROOT, 'models'))) {
    if (!hasBundle(name)) continue;
    const inTarball = listing.some((f) => f.startsWith(`package/models/${name}/`));
    if (notPackaged.includes(name)) assert.ok(!inTarball, `bundle ${name} stays out of the tarball`);
    else assert.ok(listing.includes(`package/models/${name}/config.json`), `bundle ${name} is in the tarball`);
  }
  assert.ok(!listing.some((f) => /golden|training|\.py$|tests\//.test(f)), 'no goldens, training code or tests');
  // The int8 bundles (scripts/pack.mjs) keep the tarball within issue 15's budget of 25 MB.
  for (const name of INT8_IN_PACKAGE) {
    if (!hasBundle(name)) continue;
    const config = JSON.parse(sh('tar', ['-xzOf', tarball, `package/models/${name}/config.json`], work));
    assert.equal(config.weight_precision, 'int8', `${name} ships int8`);
  }
  const mb = statSync(tarball).size / 1e6;
  assert.ok(mb <= 25, `tarball is ${mb.toFixed(1)} MB`);
});

test('a fresh Node 20 project imports { pipeline } from "attnlens" and runs each task', { timeout: 300_000 }, () => {
  const dir = copyConsumer('node');
  sh(NPM, ['install', '--offline', '--no-audit', '--no-fund', tarball], dir);
  const installed = JSON.parse(readFileSync(path.join(dir, 'node_modules', 'attnlens', 'package.json'), 'utf8'));
  assert.equal(installed.version, pkg.version);
  const out = sh(process.execPath, ['index.mjs'], dir);
  const results = JSON.parse(out.trim().split('\n').pop());
  assert.equal(results[0].info.simd, 'wasm-simd128');
  assert.match(results[0].modelBaseUrl, /node_modules\/attnlens\/models\/$/, 'models default to the package folder');
  const notPackaged = results.filter((r) => r.notPackaged);
  assert.deepEqual(notPackaged.map((r) => r.model).sort(), Object.values(TASKS).flatMap((t) => t.notPackaged ?? []).sort());
  for (const r of notPackaged) assert.match(r.error, /not shipped in the npm package.*env\.modelBaseUrl/, r.model);
  checkResults(results.filter((r) => !r.notPackaged), 'node consumer');
  assert.ok(results.some((r) => r.task === 'sentiment-analysis' && !r.error), 'sentiment ran');
});

test('a TypeScript consumer type-checks against the installed types (tsc --noEmit)', { timeout: 120_000 }, () => {
  const dir = copyConsumer('ts');
  sh(NPM, ['install', '--offline', '--no-audit', '--no-fund', tarball], dir);
  const tsc = createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  sh(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], dir);
});

function serveDir(dir) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };
  const server = createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(dir, p.endsWith('/') ? `${p}index.html` : p);
    if (!file.startsWith(dir) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('a fresh Vite project builds with attnlens and runs each task in Chromium', {
  timeout: 300_000,
  skip: process.env.ATTNLENS_SKIP_BROWSER === '1' || !existsSync(CHROMIUM) ? 'no Chromium' : false,
}, async (t) => {
  const dir = copyConsumer('vite');
  try {
    sh(NPM, ['ci', '--prefer-offline', '--no-audit', '--no-fund'], dir);
  } catch (err) {
    // Vite itself comes from the registry (or the npm cache): with neither, this check cannot run here.
    if (/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|ENOTCACHED/.test(err.message)) {
      t.skip('npm ci could not reach the registry and the npm cache lacks vite');
      return;
    }
    throw err;
  }
  sh(NPM, ['install', '--no-save', '--offline', '--no-audit', '--no-fund', tarball], dir);
  sh(process.execPath, [path.join(dir, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], dir);
  const dist = path.join(dir, 'dist');
  const assets = readdirSync(path.join(dist, 'assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `vite emitted the .wasm: ${assets}`);
  assert.ok(existsSync(path.join(dist, 'models', 'sst2-selfattn', 'config.json')), 'models copied next to the app');

  const server = await serveDir(dist);
  const browser = await launch({ width: 900, height: 700 });
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const problems = watchProblems(page, {
      allow: (url) => {
        const m = /\/models\/([^/]+)\//.exec(url);
        return Boolean(m) && !hasBundle(m[1]);
      },
    });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.body.dataset.done === 'true', null, { timeout: 120_000 });
    const results = JSON.parse(await page.textContent('#out'));
    await page.screenshot({ path: path.join(ARTIFACTS, 'vite-consumer.png') });
    checkResults(results, 'vite consumer');
    assert.ok(results.some((r) => r.task === 'sentiment-analysis' && !r.error), 'sentiment ran');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.close();
  }
});
