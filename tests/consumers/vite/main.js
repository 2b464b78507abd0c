// A Vite app using the installed package: `import { pipeline } from 'attnlens'`, each task with its default model.
// vite.config.js copies node_modules/attnlens/models/ next to the built assets; env.modelBaseUrl points there.
import { pipeline, env, listTasks } from 'attnlens';

env.modelBaseUrl = new URL('models/', document.baseURI).href;

const INPUTS = {
  'sentiment-analysis': "it 's a charming and often affecting journey .",
  translation: 'Zwei Kinder mit gelben Jacken spielen im Schlamm.',
};

function testImage() {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 64;
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#808080';
  ctx.fillRect(0, 0, 64, 64);
  ctx.fillStyle = '#d72828';
  ctx.fillRect(16, 16, 32, 32);
  return ctx.getImageData(0, 0, 64, 64);
}

async function main() {
  const results = [];
  for (const { task, defaultModel } of listTasks()) {
    try {
      const run = await pipeline(task, defaultModel);
      const input = task === 'image-to-text' ? testImage() : INPUTS[task];
      const out = task === 'visual-question-answering'
        ? await run(testImage(), 'what colour is the square?', { output_attentions: true })
        : await run(input, task === 'translation' ? { num_beams: 4, output_attentions: true } : { output_attentions: true });
      results.push({ task, model: run.model, label: out.label, text: out.text, answer: out.answer, maps: (out.attentions ?? []).length });
      run.dispose();
    } catch (err) {
      results.push({ task, model: defaultModel, error: err.message });
    }
  }
  document.getElementById('out').textContent = JSON.stringify(results, null, 1);
  document.body.dataset.done = 'true';
}

main();
