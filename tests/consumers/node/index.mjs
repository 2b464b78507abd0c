// A Node 20 app using the installed package. Prints one JSON line per task: what each default model produced.
// Models come with the package (node_modules/attnlens/models/, the default env.modelBaseUrl); the second run of
// the sentiment task shows the local-files option with an explicit folder.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline, listTasks, env, info, init } from 'attnlens';

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve('attnlens/package.json'));

const INPUTS = {
  'sentiment-analysis': "it 's a charming and often affecting journey .",
  translation: 'Zwei Kinder mit gelben Jacken spielen im Schlamm.',
};

function testImage() {
  // A 64×64 RGBA image: a red square on grey.
  const w = 64;
  const data = new Uint8ClampedArray(w * w * 4);
  for (let y = 0; y < w; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      const inside = x > 16 && x < 48 && y > 16 && y < 48;
      data.set(inside ? [215, 40, 40, 255] : [128, 128, 128, 255], i);
    }
  }
  return { data, width: w, height: w };
}

await init();
const results = [{ info: info(), modelBaseUrl: String(env.modelBaseUrl) }];
for (const { task, defaultModel } of listTasks()) {
  const input = task === 'image-to-text' ? testImage() : INPUTS[task];
  try {
    const run = await pipeline(task, defaultModel);
    const out = task === 'visual-question-answering'
      ? await run(testImage(), 'what colour is the square?', { output_attentions: true })
      : await run(input, task === 'translation' ? { num_beams: 4, output_attentions: true } : { output_attentions: true });
    results.push({
      task, model: run.model, label: out.label, score: out.score, text: out.text, answer: out.answer,
      maps: (out.attentions ?? []).map((m) => ({ name: m.name, dims: m.dims, finite: m.data.every(Number.isFinite) })),
    });
    run.dispose();
  } catch (err) {
    results.push({ task, model: defaultModel, error: err.message });
  }
}

// local_files_only with the package's models folder given explicitly (what an offline app would do).
env.allowRemoteModels = false;
const local = await pipeline('sentiment-analysis', 'sst2-selfattn', {
  local_files_only: true, model_base_url: path.join(packageDir, 'models'),
});
const out = await local('unflinchingly bleak and desperate');
results.push({ task: 'sentiment-analysis', model: 'sst2-selfattn', local: true, label: out.label });
local.dispose();

// A model that lives in the repository but not in the tarball: one clear error that says so, and what to do, with
// no warning before it (console.warn is recorded while it is asked for).
const warn = console.warn;
for (const { task, models, inPackage } of listTasks()) {
  for (const model of models.filter((m) => !inPackage.includes(m))) {
    env.allowRemoteModels = true;
    const warnings = [];
    console.warn = (...args) => warnings.push(args.join(' '));
    const error = await pipeline(task, model).then(() => null, (err) => err.message);
    console.warn = warn;
    results.push({ task, model, notPackaged: true, error, warnings });
  }
}

console.log(JSON.stringify(results));
