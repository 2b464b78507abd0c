// The caption overlay, end to end in headless Chromium (issue 20 item 4): the colour scale and what it means, the
// peak cell boxed where the word's attention peaks, the opacity control, the caption playing word by word (each word
// appearing with its own attention) and all at once under prefers-reduced-motion, and no '<unk>' in a caption.
// The attention itself is read back from the page's own JSON export of the maps (cap-mv-json).
// Screenshot: tests/e2e/artifacts/caption-overlay.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ARTIFACTS, BROWSER_SKIP, available, usePage, page, problems,
} from './helpers.mjs';

const skip = BROWSER_SKIP || (!available('captioning', 'shapes') && 'the shapes captioning bundle is not in this build');

usePage({
  skip, width: 1280, height: 1000,
  async then() {
    await page.locator('#caption').scrollIntoViewIfNeeded();
    // the automatic first caption (examples/shapes-1.png) runs when the section comes into view: let it finish
    await page.waitForFunction(() => /\d ms$/.test(document.getElementById('cap-status').textContent.trim()), null,
      { timeout: 120_000 });
  },
});

/** Clicks Caption and records, at every change of the word strip, how many words are shown and which is selected. */
async function captionAndWatch() {
  await page.evaluate(() => {
    const strip = document.getElementById('cap-words');
    window.__strip = [];
    const note = () => {
      const b = [...strip.children];
      window.__strip.push({
        playing: strip.dataset.playing === 'true',
        total: b.length,
        shown: strip.dataset.playing === 'true' ? b.filter((x) => x.classList.contains('shown')).length : b.length,
        selected: b.findIndex((x) => x.getAttribute('aria-pressed') === 'true'),
      });
    };
    window.__observer?.disconnect();
    window.__observer = new MutationObserver(note);
    window.__observer.observe(strip, { subtree: true, childList: true, attributes: true });
    document.getElementById('cap-status').textContent = '';
  });
  await page.click('#cap-run');
  await page.waitForFunction(() => /\d ms$/.test(document.getElementById('cap-status').textContent.trim()), null,
    { timeout: 120_000 });
  return page.evaluate(() => { window.__observer.disconnect(); return window.__strip; });
}

async function mapsJson() {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.click('#cap-mv-json')]);
  return JSON.parse(readFileSync(await dl.path(), 'utf8'));
}

const argmax = (a) => a.reduce((best, v, i) => (v > a[best] ? i : best), 0);

test('the caption plays word by word, each word with its attention; at once under reduced motion', { skip }, async () => {
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  const log = await captionAndWatch();
  const total = log.at(-1).total;
  assert.ok(total >= 3, `${total} words`);
  const playing = log.filter((s) => s.playing && s.total === total);
  // every count of shown words from 1 to all of them was seen, in order, and the selected word was the last shown
  const counts = [...new Set(playing.map((s) => s.shown))];
  assert.deepEqual(counts, Array.from({ length: total }, (_, i) => i + 1), 'words appear one at a time');
  for (const s of playing.filter((x) => x.selected >= 0)) assert.ok(s.selected <= s.shown - 1, JSON.stringify(s));
  assert.ok(playing.some((s) => s.selected === s.shown - 1 && s.shown > 1), 'the overlay follows the spoken word');
  const end = await page.evaluate(() => ({
    playing: 'playing' in document.getElementById('cap-words').dataset,
    hidden: [...document.querySelectorAll('#cap-words button')].filter((b) => getComputedStyle(b).visibility === 'hidden').length,
    selected: [...document.querySelectorAll('#cap-words button')].findIndex((b) => b.getAttribute('aria-pressed') === 'true'),
  }));
  assert.deepEqual(end, { playing: false, hidden: 0, selected: 0 }, 'after playing: all words, back on the first');

  await page.emulateMedia({ reducedMotion: 'reduce' });
  const still = await captionAndWatch();
  assert.ok(still.length > 0);
  assert.ok(still.every((s) => !s.playing), 'reduced motion: no playing');
  assert.ok(still.filter((s) => s.total > 0).every((s) => s.shown === s.total), 'reduced motion: all words at once');
  // the replay button plays it again (motion allowed)
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  await page.click('#cap-replay');
  assert.equal(await page.$eval('#cap-words', (s) => s.dataset.playing), 'true');
  await page.click('#cap-words button:nth-child(2)'); // a click on a word stops it there
  assert.deepEqual(await page.$eval('#cap-words', (s) => [s.dataset.playing ?? null,
    [...s.children].findIndex((b) => b.getAttribute('aria-pressed') === 'true')]), [null, 1]);
  assert.deepEqual(problems, []);
});

test('overlay: the peak cell is boxed, the colour scale says what the peak is, the opacity slider works', { skip }, async () => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const doc = await mapsJson();
  const words = await page.$$eval('#cap-words button', (b) => b.map((x) => x.textContent));
  assert.equal(doc.maps.length, words.length);
  for (const t of [0, Math.min(2, words.length - 1), words.length - 1]) {
    await page.click(`#cap-words button:nth-child(${t + 1})`);
    const m = doc.maps[t];
    const g = m.dims[0]; // the bundle's grid, g × g cells (7 at a 224² input)
    assert.deepEqual(m.dims, [g, g]);
    assert.equal(m.data.length, g * g);
    const peak = argmax(m.data);
    const info = await page.$eval('#cap-overlay', (c) => ({ peak: c.dataset.peak, box: c.dataset.peakBox }));
    assert.equal(info.peak, `${Math.floor(peak / g)},${peak % g}`, `word ${t} "${words[t]}": the boxed cell is the peak`);
    // the legend: the peak's share of the word's attention and the uniform share (1/g², 2.0% at 7×7), as numbers
    const legend = await page.textContent('#cap-scale-hi');
    const pct = /peak cell: ([\d.]+)% of "(.*)"'s attention \(uniform: ([\d.]+)% per cell\)/.exec(legend);
    assert.ok(pct, legend);
    assert.equal(pct[2], words[t]);
    assert.ok(Math.abs(Number(pct[1]) - 100 * m.data[peak]) <= 0.051, `${legend} vs ${m.data[peak]}`);
    assert.equal(pct[3], (100 / (g * g)).toFixed(1), legend);
    // the box's outline is drawn white on the canvas (its top edge, a quarter of the way along)
    const [bx, by, bw] = info.box.split(',').map(Number);
    const px = await page.$eval('#cap-overlay', (c, [x, y]) => {
      const k = c.width / c.getBoundingClientRect().width; // the canvas may be drawn at devicePixelRatio
      return [...c.getContext('2d').getImageData(Math.round(x * k), Math.floor(y * k), 1, 1).data];
    }, [bx + bw / 4, by]); // the white line is 2 px wide, centred on the box edge (peakBox): the pixel inside it
    assert.ok(px[0] > 200 && px[1] > 200 && px[2] > 200, `box outline pixel ${px}`);
  }
  // the colour scale bar has ink from dark to bright
  const bar = await page.$eval('#cap-scale', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const lum = (i) => d[i] + d[i + 1] + d[i + 2];
    return [lum(4 * Math.floor(c.height / 2) * c.width + 4), lum(4 * (Math.floor(c.height / 2) * c.width + c.width - 2))];
  });
  assert.ok(bar[0] < 150 && bar[1] > 550, `scale from dark to bright: ${bar}`);
  // opacity: 0 shows the photo alone, more opacity more colour; the overlay changes with it
  const probe = () => page.$eval('#cap-overlay', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, Math.floor(c.height * 0.88)).data;
    let h = 2166136261;
    for (let i = 0; i < d.length; i += 4) h = Math.imul(h ^ (d[i] + 3 * d[i + 1] + 7 * d[i + 2]), 16777619) >>> 0;
    return h;
  });
  const hashes = [];
  for (const v of ['0', '40', '100']) {
    await page.$eval('#cap-opacity', (el, x) => { el.value = x; el.dispatchEvent(new Event('input')); }, v);
    hashes.push(await probe());
  }
  assert.equal(new Set(hashes).size, 3, 'each opacity draws a different overlay');
  await page.$eval('#cap-opacity', (el) => { el.value = '65'; el.dispatchEvent(new Event('input')); });
  await page.locator('#caption .panel').first().screenshot({ path: path.join(ARTIFACTS, 'caption-overlay.png') });
  assert.deepEqual(problems, []);
});

// The example photos are in the model's world: each default caption names what the photo shows (web/examples/
// LICENSE.md lists them with the captions the CLI gives), and none says <unk>.
const PHOTO_WORDS = { 'examples/dog.jpg': /\bdog\b/, 'examples/surfer.jpg': /\bsurf/ };
test('photos: the default caption names what the photo shows and never says <unk>', { skip: skip || (!available('captioning', 'flickr8k-mobilenet') && 'no flickr8k-mobilenet bundle') }, async () => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  for (const [src, word] of Object.entries(PHOTO_WORDS)) {
    await page.click(`#cap-examples .thumb[data-src="${src}"]`);
    await page.waitForFunction((s) => document.getElementById('cap-status').textContent.includes(s.split('/').pop()), src,
      { timeout: 10_000 });
    await captionAndWatch();
    const caption = await page.textContent('#cap-output');
    assert.ok(caption.split(' ').length >= 3, caption);
    assert.doesNotMatch(caption, /<unk>/, `${src}: ${caption}`);
    assert.match(caption, word, `${src}: ${caption}`);
  }
  assert.deepEqual(problems, []);
});
