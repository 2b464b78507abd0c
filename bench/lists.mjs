// A list of sentences (or images) in one call against one call per item, one thread, in one process (rounds
// alternate which goes first; median of process-CPU seconds). Transformer and RNN lists (greedy, or beams without a
// coverage penalty) and greedy caption lists are decoded together (docs/DESIGN.md §4.4); a sentiment list saves
// only the per-call overhead. The script also checks that
// both ways give the same outputs and the same maps, bit for bit.
//
//   node bench/lists.mjs [--model de-en-general | sst2-selfattn | flickr8k-mobilenet | …] [--n 40] [--rounds 7]
//                        [--maps 0|1] [--beams 1]   (--beams: translators only)
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';

import { syntheticImage } from './synthetic.mjs';
import { init, pipeline } from '../wasm/index.js';

const { values: args } = parseArgs({ options: {
  model: { type: 'string', default: 'de-en-general' }, n: { type: 'string', default: '40' },
  rounds: { type: 'string', default: '7' }, maps: { type: 'string', default: '1' },
  beams: { type: 'string', default: '1' },
} });
const sentiment = args.model.startsWith('sst2');
const captions = args.model === 'flickr8k-mobilenet' || args.model === 'shapes';

let lines;
if (captions) {
  lines = Array.from({ length: Number(args.n) }, (_, i) => syntheticImage(i));
} else {
  const DATA = new URL(sentiment ? '../../shared/data/sst2/dev.tsv' : '../../shared/data/multi30k/test_2016_flickr.de.gz',
    import.meta.url);
  try {
    lines = sentiment
      ? readFileSync(DATA, 'utf8').split('\n').slice(1).map((l) => l.split('\t')[0]).filter(Boolean)
      : gunzipSync(readFileSync(DATA)).toString('utf8').split('\n').filter(Boolean);
    lines = lines.slice(0, Number(args.n));
  } catch (err) {
    console.error(`bench/lists: cannot read ${DATA.pathname} (${err.message})`);
    process.exit(1);
  }
}
await init({ threads: 1 });
const translate = await pipeline(sentiment ? 'sentiment-analysis' : captions ? 'image-to-text' : 'translation', args.model);
const beams = Number(args.beams);
const options = sentiment ? { output_attentions: args.maps !== '0' }
  : { num_beams: captions ? 1 : beams, output_attentions: args.maps !== '0' };
const oneByOne = async () => { const out = []; for (const s of lines) out.push(await translate(s, options)); return out; };
const asList = async () => translate(lines, options);

const a = await oneByOne();
const b = await asList();
const same = a.every((x, i) => x.text === b[i].text && x.label === b[i].label && Object.is(x.score, b[i].score) &&
  x.attentions.values.length === b[i].attentions.values.length &&
  x.attentions.values.every((v, j) => Object.is(v, b[i].attentions.values[j])));
const t = { one: [], list: [] };
for (let r = 0; r < Number(args.rounds); r++) {
  for (const [k, f] of r % 2 ? [['list', asList], ['one', oneByOne]] : [['one', oneByOne], ['list', asList]]) {
    const c0 = process.cpuUsage();
    await f();
    const c = process.cpuUsage(c0);
    t[k].push((c.user + c.system) / 1e6);
  }
}
const median = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];
console.log(`| ${args.model}, ${lines.length} ${captions ? 'images' : 'sentences'}${sentiment ? '' : !captions && beams > 1 ? `, beam ${beams}` : ', greedy'}, ${options.output_attentions ? 'every map' : 'no maps'} | ` +
  `${median(t.one).toFixed(3)} s | ${median(t.list).toFixed(3)} s | **${(median(t.one) / median(t.list)).toFixed(2)}×** | ${same ? 'yes' : '**no**'} |`);
translate.dispose();
if (!same) process.exit(1);
