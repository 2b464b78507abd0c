// pipeline() and the bundle loader (wasm/pipeline.js, wasm/models.js): task and model resolution, the files a
// config may name, progress events and errors. The tasks' own results are tested in <task>.test.mjs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { pipeline, listTasks, loadBundle, env, TASKS } from '../../wasm/index.js';
import { bundleFileNames, resolveModelUrl } from '../../wasm/models.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('listTasks names every task and a default model for each, and every default is a shipped bundle', async () => {
  const tasks = listTasks();
  assert.deepEqual(tasks.map((t) => t.task).sort(), ['image-to-text', 'number-sorting', 'sentiment-analysis', 'translation', 'visual-question-answering']);
  for (const t of tasks) assert.ok(t.models.includes(t.defaultModel), t.task);
  // The converted models' tasks have no bundled model: in TASKS (defaultModel null), not in listTasks().
  assert.deepEqual(Object.keys(TASKS).filter((t) => TASKS[t].defaultModel === null).sort(),
    ['feature-extraction', 'image-classification', 'text-generation']);
  for (const name of ['sst2-selfattn', 'sst2-relation', 'de-en-transformer']) {
    const b = await loadBundle(name);
    assert.equal(typeof b.config.architecture, 'string');
    assert.ok(b.files[b.config.weights ?? 'weights.safetensors'].length > 1_000_000, name);
  }
});

test('unknown tasks, bad option types and unknown models fail with messages naming them', async () => {
  await assert.rejects(pipeline('summarization'), /unknown task "summarization".*translation/);
  await assert.rejects(pipeline(42), /task must be a string/);
  await assert.rejects(pipeline('translation', undefined, null), /options must be an object/);
  await assert.rejects(pipeline('translation', undefined, { progress_callback: 'yes' }), /progress_callback must be a function/);
  await assert.rejects(loadBundle('no-such-model'), /no-such-model\/config\.json/);
  await assert.rejects(loadBundle(''), /bundle name/);
  await assert.rejects(loadBundle('bad name!'), /plain file name/);
});

test('a bundle is resolved by name under env.modelBaseUrl, by folder path, or under model_base_url', async () => {
  const byName = await resolveModelUrl('sst2-selfattn');
  assert.equal(byName.href, new URL('../../models/sst2-selfattn/', import.meta.url).href);
  const byPath = await resolveModelUrl(path.join(ROOT, 'models', 'sst2-relation'));
  assert.equal(byPath.href, new URL('../../models/sst2-relation/', import.meta.url).href);
  const base = await resolveModelUrl('x', { model_base_url: 'https://example.org/m' });
  assert.equal(base.href, 'https://example.org/m/x/');
  assert.equal(env.modelBaseUrl, new URL('../../models/', import.meta.url).href);
});

test('loadBundle reports progress from initiate to ready, with bytes that add up to the files', async () => {
  const events = [];
  const b = await loadBundle('sst2-relation', { progress_callback: (e) => events.push(e) });
  assert.equal(events[0].status, 'initiate');
  assert.deepEqual(events[0].files, ['weights.safetensors', 'vocab.txt']);
  assert.equal(events.at(-1).status, 'ready');
  const total = Object.values(b.files).reduce((n, f) => n + f.length, 0);
  assert.equal(events.at(-1).loaded, total);
  const progress = events.filter((e) => e.status === 'progress').map((e) => e.progress);
  assert.ok(progress.length >= 2 && progress.every((p, i) => i === 0 || p >= progress[i - 1]));
  assert.equal(events.filter((e) => e.status === 'done').length, 2);
});

test('a config can only name plain files inside its own folder', async () => {
  assert.throws(() => bundleFileNames({ weights: '../../etc/passwd' }), /plain file name/);
  assert.throws(() => bundleFileNames({ tokenizer: { vocab: '/abs/vocab.txt' } }), /plain file name/);
  assert.throws(() => bundleFileNames({ files: 'a.bin' }), /"files" must be an array/);
  assert.throws(() => bundleFileNames([]), /JSON object/);
  assert.deepEqual(bundleFileNames({ tokenizer: { vocab: 'v.txt', merges: 'm.txt' }, files: ['v.txt', 'x.bin'] }),
    ['weights.safetensors', 'v.txt', 'm.txt', 'x.bin']);

  const dir = mkdtempSync(path.join(tmpdir(), 'attnlens-bundle-'));
  mkdirSync(path.join(dir, 'evil'));
  writeFileSync(path.join(dir, 'evil', 'config.json'), JSON.stringify({ architecture: 'x', weights: '../secret' }));
  await assert.rejects(loadBundle(path.join(dir, 'evil')), /plain file name/);
  writeFileSync(path.join(dir, 'evil', 'config.json'), '{ not json');
  await assert.rejects(loadBundle(path.join(dir, 'evil')), /config\.json is not valid JSON/);
  writeFileSync(path.join(dir, 'evil', 'config.json'), JSON.stringify({ architecture: 'x' }));
  await assert.rejects(loadBundle(path.join(dir, 'evil')), /weights\.safetensors \(ENOENT\)/);
});

test('a model of another task is refused before any engine object is made', async () => {
  await assert.rejects(pipeline('translation', 'sst2-selfattn'), /sentiment-analysis model, not translation/);
});

test('a misspelt task or model name is one Error that suggests the closest names', async (t) => {
  const warn = t.mock.method(console, 'warn', () => {});
  await assert.rejects(pipeline('translaton'), (err) => {
    assert.equal(err.message, 'attnlens: unknown task "translaton"; did you mean "translation"? The tasks: sentiment-analysis, ' +
      'translation, image-to-text, number-sorting, visual-question-answering, text-generation, feature-extraction, ' +
      'image-classification (aliases: pointer-sort, sort, text-classification, ' +
      'sentiment, image-captioning, vqa)');
    return true;
  });
  await assert.rejects(pipeline('image-captoning'), /did you mean "image-captioning"\?/);
  await assert.rejects(pipeline('summarization'), /^Error: attnlens: unknown task "summarization"\. The tasks: /);
  const models = path.join(ROOT, 'models');
  await assert.rejects(pipeline('translation', 'de-en-genral'), (err) => {
    assert.equal(err.message, `attnlens: model "de-en-genral" not found in ${models}/; did you mean "de-en-general"? The translation ` +
      'models: de-en-general, de-en-transformer, de-en-rnn-general, de-en-rnn-additive (in the npm package: de-en-general); ' +
      'a model may also be a bundle folder (a URL, or a path in Node)');
    assert.match(err.cause.message, /de-en-genral\/config\.json \(ENOENT\)/, 'the loader\'s own error is its cause');
    return true;
  });
  await assert.rejects(pipeline('sentiment', 'sst2-selfatn'), /model "sst2-selfatn" not found in .*; did you mean "sst2-selfattn"\? /);
  await assert.rejects(pipeline('translation', 'sst2-relatoin'), /did you mean "sst2-relation" \(a sentiment-analysis model\)\?/);
  await assert.rejects(pipeline('number-sorting', 'quicksort'), /model "quicksort" not found in .*\/models\/\. The number-sorting models: pointer-sort/);
  assert.equal(warn.mock.callCount(), 0, 'no warning before the errors');
});

test('a model the npm package does not carry is one Error saying why and what to do, with no warning first', async (t) => {
  // The package's models/ lacks de-en-transformer; a base folder without it stands for it here.
  const base = mkdtempSync(path.join(tmpdir(), 'attnlens-package-models-'));
  const warn = t.mock.method(console, 'warn', () => {});
  await assert.rejects(pipeline('translation', 'de-en-transformer', { model_base_url: base }), (err) => {
    assert.equal(err.message, 'attnlens: model "de-en-transformer" is not shipped in the npm package, which carries only ' +
      `de-en-general of the translation models to stay small, and was not found in ${base}/. To use it, copy ` +
      "models/de-en-transformer/ from the attnlens repository and pass that folder as the model (pipeline('translation', " +
      "'./models/de-en-transformer/')), or point env.modelBaseUrl (or the model_base_url option) at the folder that holds it");
    return true;
  });
  // A model the package does carry, asked for under a base that lacks it: where the package's own models are.
  await assert.rejects(pipeline('sentiment-analysis', 'sst2-selfattn', { model_base_url: base }),
    new RegExp(`model "sst2-selfattn" not found in ${base}/ \\(the package's own models are in ${path.join(ROOT, 'models')}/\\); point env\\.modelBaseUrl`));
  // A folder with no bundle: the loader's error, and no warning about a manifest before it.
  await assert.rejects(pipeline('translation', path.join(base, 'nothing-here')), /nothing-here\/config\.json \(ENOENT\)/);
  assert.equal(warn.mock.callCount(), 0, 'no integrity warning before the errors');
  // The repository's folder of that model, given as a path, loads with no warning either.
  const translate = await pipeline('translation', path.join(ROOT, 'models', 'de-en-transformer'));
  assert.equal(translate.model, 'de-en-transformer');
  translate.dispose();
  assert.equal(warn.mock.callCount(), 0);
});
