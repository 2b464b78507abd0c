// A TypeScript app using the installed package's types (node_modules/attnlens/wasm/index.d.ts). It is only
// type-checked (tsc --noEmit); the @ts-expect-error lines must be rejected by the types.
import { pipeline, env, loadBundle, listTasks, attention, tensor } from 'attnlens';
import type { AttentionMap, ProgressInfo, SentimentResult, TranslationResult, CaptionResult, Bundle, VqaResult } from 'attnlens';

export async function demo(): Promise<string> {
  env.modelBaseUrl = '/models/';
  env.allowRemoteModels = true;
  const onProgress = (p: ProgressInfo): void => {
    if (p.status === 'progress') console.log(`${p.file}: ${p.progress.toFixed(0)}%`);
  };

  const classify = await pipeline('sentiment-analysis', 'sst2-selfattn', { progress_callback: onProgress });
  const s: SentimentResult = await classify("it's a charming journey");
  const many: SentimentResult[] = await classify(['good', 'bad']);
  const hops: AttentionMap | undefined = s.attentions.at(0);
  classify.dispose();

  const translate = await pipeline('translation', 'de-en-general', { local_files_only: true, precision: 'int8' });
  const t: TranslationResult = await translate('Ein Hund rennt.', { num_beams: 4, output_attentions: true });
  const cross = t.attentions.filter((m) => m.name === 'cross');
  translate.dispose();

  const caption = await pipeline('image-to-text');
  const c: CaptionResult = await caption({ data: new Uint8ClampedArray(4 * 4 * 4), width: 4, height: 4 }, { num_beams: 3 });

  const vqa = await pipeline('visual-question-answering', 'shapes-vqa-aoa');
  const v: VqaResult = await vqa({ data: new Uint8ClampedArray(4 * 4 * 4), width: 4, height: 4 }, 'how many circles are there?');
  const region = v.attentions.find((m) => m.name === 'region_attention' && m.layer === 1);
  // @ts-expect-error the question is a string
  await vqa({ data: new Uint8ClampedArray(4), width: 1, height: 1 }, 3);
  vqa.dispose();

  const bundle: Bundle = await loadBundle('sst2-relation', { model_base_url: new URL('https://example.org/models/') });
  const fromBytes = await pipeline('sentiment-analysis', bundle);
  const tasks = listTasks().map((x) => `${x.task}:${x.defaultModel}`);

  const { scores } = attention.scoreDot({ q: tensor([1, 0], [1, 2]), keys: tensor([1, 0, 0, 1], [2, 2]) });

  // @ts-expect-error not a task
  await pipeline('speech-recognition');
  // @ts-expect-error int4 is not a precision
  await pipeline('translation', 'de-en-general', { precision: 'int4' });
  // @ts-expect-error a sentiment result has no translation text
  const bad: string = s.label + s.text.length;

  return [s.label, many.length, hops?.dims.join('x'), t.text, cross.length, c.text, fromBytes.model, tasks.join(), scores.data[0], bad, v.answer, region?.dims.join('x')].join(' ');
}
