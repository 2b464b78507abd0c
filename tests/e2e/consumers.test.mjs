// The package as users install it: `npm run pack` (scripts/pack.mjs) makes the tarball, and four fresh projects (tests/consumers/) install
// it from that tarball — never from the repo — then use it: a Node 20 app runs each task with the package's own
// models, every example of the docs runs as written, a TypeScript consumer type-checks (tsc --noEmit), and a Vite
// app is built and runs each task in Chromium.
// Installs are offline-safe: the tarball has no dependencies, and the Vite app's are pinned by its package-lock.json
// (npm ci --prefer-offline uses the npm cache when it holds them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ROOT, ARTIFACTS, CHROMIUM, hasBundle, launch, watchProblems } from './helpers.mjs';
import { TASKS } from '../../wasm/pipeline.js';
import { INT8_IN_PACKAGE, pack } from '../../scripts/pack.mjs';
import { floatValues, parseSafetensors } from '../../scripts/safetensors.mjs';

// The consumers translate 'Zwei Kinder mit gelben Jacken spielen im Schlamm.' (tests/consumers/*): PyTorch's beam-4
// output for it is a case of the default translator's goldens (de-en-general).
const GOLDEN_TRANSLATION = JSON.parse(readFileSync(path.join(ROOT, 'models', 'de-en-general', 'golden.json'), 'utf8'))
  .cases.find((c) => c.source === 'Zwei Kinder mit gelben Jacken spielen im Schlamm.').beam4.text;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
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
    'package/wasm/dist/attnlens.js', 'package/wasm/pipeline.js', 'package/wasm/models.js',
    'package/wasm/dist/attnlens-hf.js', 'package/wasm/dist/attnlens-hf.wasm', 'package/wasm/pipelines/hf.js']) {
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
  for (const r of notPackaged) {
    assert.match(r.error, new RegExp(`^attnlens: model "${r.model}" is not shipped in the npm package.*copy models/${r.model}/ ` +
      'from the attnlens repository and pass that folder as the model.*env\\.modelBaseUrl'), r.model);
    assert.deepEqual(r.warnings, [], `${r.model}: one error, no warning before it`);
  }
  checkResults(results.filter((r) => !r.notPackaged), 'node consumer');
  assert.ok(results.some((r) => r.task === 'sentiment-analysis' && !r.error), 'sentiment ran');
});

// A user's path with their own model: install the tarball in an empty project, `npx attnlens convert` a Hugging Face
// folder (the committed BERT classifier fixture), then pipeline() runs the converted bundle on the package's
// converted-models module: the bundle is the converter's committed output (scripts/convert-fixtures.mjs keeps
// tests/fixtures/hf/*/bundle so), logits equal the PyTorch goldens, every layer × head map comes back.
test('a fresh project converts a Hugging Face folder with npx attnlens convert and runs it through pipeline()', { timeout: 300_000 }, () => {
  const dir = path.join(work, 'hf-consumer');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'hf-consumer', private: true, type: 'module' }));
  sh(NPM, ['install', '--offline', '--no-audit', '--no-fund', tarball], dir);
  const fixture = path.join(ROOT, 'tests', 'fixtures', 'hf', 'bert-tiny');
  sh(NPX, ['--offline', 'attnlens', 'convert', path.join(fixture, 'hf'), 'my-bundle', '--name', 'bert-tiny'], dir);
  for (const f of readdirSync(path.join(fixture, 'bundle'))) {
    assert.ok(readFileSync(path.join(dir, 'my-bundle', f)).equals(readFileSync(path.join(fixture, 'bundle', f))),
      `my-bundle/${f} is the committed converter output`);
  }
  const golden = JSON.parse(readFileSync(path.join(ROOT, 'tests', 'goldens', 'hf', 'bert-tiny.json'), 'utf8'));
  writeFileSync(path.join(dir, 'run.mjs'), `import { pipeline } from 'attnlens';
const classify = await pipeline('text-classification', './my-bundle/');
const cases = [];
for (const input_ids of ${JSON.stringify(golden.cases.map((c) => c.input_ids))}) {
  const out = await classify({ input_ids });
  cases.push({ label: out.label, logits: Array.from(out.logits), maps: out.attentions.length });
}
const text = await classify('a fine film');
const features = await pipeline('feature-extraction', './my-bundle/');
const f = await features('a fine film');
console.log(JSON.stringify({ task: classify.task, architecture: classify.architecture, labels: classify.labels, cases,
  text: { label: text.label, tokens: text.tokens, maps: text.attentions.length },
  features: { dims: Array.from(f.dims), finite: f.features.every(Number.isFinite), maps: f.attentions.length } }));
classify.dispose();
features.dispose();
`);
  const r = JSON.parse(sh(process.execPath, ['run.mjs'], dir).trim().split('\n').pop());
  assert.equal(r.task, 'text-classification');
  assert.equal(r.architecture, 'hf-bert');
  assert.deepEqual(r.labels, golden.labels);
  const st = parseSafetensors(new Uint8Array(readFileSync(path.join(ROOT, 'tests', 'goldens', 'hf', 'bert-tiny.safetensors'))));
  const hf = JSON.parse(readFileSync(path.join(fixture, 'hf', 'config.json'), 'utf8'));
  const maps = hf.num_hidden_layers * hf.num_attention_heads;
  assert.equal(r.cases.length, golden.cases.length);
  r.cases.forEach((c, i) => {
    const want = floatValues(st.header[`case${i}/logits`], st.data);
    const diff = Math.max(...c.logits.map((x, j) => Math.abs(x - want[j])));
    assert.ok(c.logits.length === want.length && diff <= golden.tolerance.abs, `case ${i}: logits differ by ${diff}`);
    assert.equal(c.label, golden.labels[want.indexOf(Math.max(...want))]);
    assert.equal(c.maps, maps, `case ${i}: one map per layer × head`);
  });
  assert.ok(r.text.tokens.length >= 3 && golden.labels.includes(r.text.label), JSON.stringify(r.text));
  assert.equal(r.text.maps, maps);
  assert.deepEqual(r.features.dims, [r.text.tokens.length, hf.hidden_size]);
  assert.ok(r.features.finite);
  assert.equal(r.features.maps, maps);
});

test('every example of README.md, docs/*.md and index.d.ts runs as written where the tarball is installed', { timeout: 900_000 }, () => {
  // tests/consumers/examples/run.mjs writes each example into the fresh project and runs it there with Node (or,
  // for a browser or bundler example, syntax-checks it); each must exit 0, print nothing on stderr (no warning) and
  // print exactly the output its comments show.
  const dir = copyConsumer('examples');
  sh(NPM, ['install', '--offline', '--no-audit', '--no-fund', tarball], dir);
  const results = JSON.parse(sh(process.execPath, ['run.mjs', ROOT], dir, { timeout: 900_000 }).trim().split('\n').pop());
  const run = results.filter((r) => r.mode === 'node');
  assert.ok(run.length >= 8 && results.some((r) => r.mode === 'syntax'), `the examples found: ${results.map((r) => r.id)}`);
  assert.ok(results.some((r) => r.id.startsWith('docs/')) && results.some((r) => r.id.startsWith('wasm/index.d.ts')));
  assert.ok(run.some((r) => r.cwd === 'repository'), 'the example of a model from a bundle folder outside the package');
  for (const r of results) {
    assert.equal(r.status, 0, `${r.id} failed:\n${r.stderr}`);
    assert.equal(r.stderr, '', `${r.id} printed on stderr (a warning?)`);
    assert.deepEqual(r.missingImports, [], `${r.id} imports names the package does not export`);
    if (r.mode !== 'node') continue;
    assert.ok(r.expected.length > 0, `${r.id} shows its output in comments under console.log`);
    assert.deepEqual(r.stdout.trimEnd().split('\n'), r.expected, `${r.id}: printed output against its comments`);
  }
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
