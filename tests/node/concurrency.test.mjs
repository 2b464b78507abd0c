// Calls on one pipeline never interleave, and a disposed pipeline says so (issue 19, items 4 and 7): concurrent
// calls (Promise.all) are queued and run one after the other in the order they were made (wasm/pipeline.js,
// serialised()), their results are those of the same calls made one at a time, and a call on a disposed pipeline —
// or one still queued when dispose() is called — rejects with an Error naming the task and the model.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';

import { pipeline } from '../../wasm/index.js';

let translate;
let classify;
let caption;
before(async () => {
  translate = await pipeline('translation', 'de-en-general');
  classify = await pipeline('sentiment-analysis', 'sst2-selfattn');
  caption = await pipeline('image-to-text', 'shapes');
});
after(() => {
  for (const p of [translate, classify, caption]) p?.dispose();
});

const GERMAN = ['Ein Hund rennt.', 'Zwei Kinder spielen im Schlamm.', 'Ich habe keine Zeit.', 'Eine Frau liest ein Buch.'];
const ENGLISH = ["it 's a charming and often affecting journey .", 'unflinchingly bleak and desperate', 'a masterpiece'];
const image = (seed, log) => {
  const data = new Uint8ClampedArray(24 * 24 * 4);
  for (let i = 0; i < data.length; i++) data[i] = (i * (7 + seed) + seed * 50) & 255;
  // The pipeline reads `width` once per image, when it starts on it: the log records the order images are taken.
  return { data, get width() { log?.push(seed); return 24; }, height: 24 };
};

test('Promise.all on one pipeline gives the results of the same calls made one at a time, in order', async () => {
  const one = [];
  for (const s of GERMAN) one.push((await translate(s, { num_beams: 2 })).text);
  const order = [];
  const all = await Promise.all(GERMAN.map((s, i) => translate(s, { num_beams: 2 }).then((r) => {
    order.push(i);
    return r.text;
  })));
  assert.deepEqual(all, one);
  assert.deepEqual(order, [0, 1, 2, 3], 'settled in the order they were made');

  const labels = [];
  for (const s of ENGLISH) labels.push((await classify(s)).label);
  assert.deepEqual((await Promise.all([...ENGLISH.map((s) => classify(s)), classify(ENGLISH)])).map((r) => r.label ?? r.map((x) => x.label)),
    [...labels, labels]);

  // translate() and translate.align() share the queue
  const [t, a] = await Promise.all([translate(GERMAN[0], { num_beams: 1 }), translate.align(GERMAN[0], 'A dog runs.')]);
  assert.equal(t.text, (await translate(GERMAN[0], { num_beams: 1 })).text);
  assert.equal(a.target_tokens.join(''), (await translate.align(GERMAN[0], 'A dog runs.')).target_tokens.join(''));
});

test('concurrent calls never interleave: two array calls are run one whole call after the other', async () => {
  const log = [];
  const a = [1, 2, 3].map((s) => image(s, log));
  const b = [4, 5, 6].map((s) => image(s, log));
  const [ra, rb] = await Promise.all([caption(a, { num_beams: 1 }), caption(b, { num_beams: 1 })]);
  assert.deepEqual(log, [1, 2, 3, 4, 5, 6], 'the second call started after the first had finished every image');
  const alone = [];
  for (const x of [...a, ...b]) alone.push((await caption(x, { num_beams: 1 })).text);
  assert.deepEqual([...ra, ...rb].map((r) => r.text), alone);
});

test('a failing call does not block the queue, and the calls after it run', async () => {
  const results = await Promise.allSettled([
    classify('a masterpiece'),
    classify(''), // refused by the engine
    classify(42), // refused by the JS checks
    classify('unflinchingly bleak and desperate'),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
  assert.match(results[1].reason.message, /empty input/);
  assert.ok(results[2].reason instanceof TypeError);
  assert.equal(results[3].value.label, 'NEGATIVE');
});

test('a disposed pipeline rejects every call with a clear Error; calls still queued at dispose() too', async () => {
  const cases = [
    ['translation', 'de-en-general', (p) => p('Ein Hund rennt.', { num_beams: 1 })],
    ['sentiment-analysis', 'sst2-selfattn', (p) => p('a masterpiece')],
    ['image-to-text', 'shapes', (p) => p(image(1), { num_beams: 1 })],
  ];
  for (const [task, model, call] of cases) {
    const p = await pipeline(task, model);
    // One call running, two queued behind it, then dispose(): the queued ones reject. The running one has done its
    // engine work already (text) or rejects the same way (an image, still being read when dispose() came).
    const running = call(p);
    const queued = [call(p), call(p)];
    p.dispose();
    assert.equal(p.disposed, true);
    const settled = await Promise.allSettled([running, ...queued]);
    const message = new RegExp(`^attnlens: this ${task} pipeline \\(${model}\\) has been disposed$`);
    if (task === 'image-to-text') {
      assert.ok(settled[0].status === 'rejected' && message.test(settled[0].reason.message), `${task}: ${settled[0].reason}`);
    } else {
      assert.equal(settled[0].status, 'fulfilled', `${task}: the call already running completes`);
    }
    for (const s of settled.slice(1)) {
      assert.equal(s.status, 'rejected', `${task}: a queued call`);
      assert.ok(s.reason instanceof Error && message.test(s.reason.message), `${task}: ${s.reason}`);
    }
    await assert.rejects(call(p), (err) => err instanceof Error && message.test(err.message), `${task}: a later call`);
    if (task === 'translation') {
      await assert.rejects(p.align('Ein Hund.', 'A dog.'), (err) => err instanceof Error && message.test(err.message));
    }
    if (task === 'image-to-text') {
      assert.throws(() => p.encode(image(1)), (err) => err instanceof Error && message.test(err.message));
      assert.throws(() => p.captionGrid(new Float32Array(49 * 1285)), (err) => err instanceof Error && message.test(err.message));
    }
    p.dispose(); // a second dispose() is harmless
  }
});
