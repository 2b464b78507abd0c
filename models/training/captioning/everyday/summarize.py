#!/usr/bin/env python3
"""Counts yes / partly / no in a judgements file of the everyday-photo set.

  /usr/bin/python3 models/training/captioning/everyday/summarize.py [JUDGEMENTS.jsonl] [--captions CAPTIONS.jsonl]

JUDGEMENTS defaults to judgements.jsonl next to this script. With --captions (a caption_everyday.mjs output), it also
checks that every photo of photos/ is judged exactly once and that each judged caption is the one in CAPTIONS (so a
figure is never quoted for captions that were not the model's), and lists the photos whose caption changed.
"""
import argparse
import collections
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('judgements', nargs='?', default=os.path.join(HERE, 'judgements.jsonl'))
    ap.add_argument('--captions')
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.judgements) if line.strip()]
    images = [r['image'] for r in rows]
    photos = sorted(f for f in os.listdir(os.path.join(HERE, 'photos')) if f.lower().endswith(('.jpg', '.jpeg', '.png')))
    dup = [i for i, n in collections.Counter(images).items() if n > 1]
    missing = sorted(set(photos) - set(images))
    if dup or missing:
        raise SystemExit(f'judged twice: {dup}; not judged: {missing}')
    bad = [r['image'] for r in rows if r['judgement'] not in ('yes', 'partly', 'no')]
    if bad:
        raise SystemExit(f'judgement not yes/partly/no: {bad}')
    if args.captions:
        caps = {c['image']: c['caption'] for c in map(json.loads, open(args.captions)) if c}
        changed = [r['image'] for r in rows if caps.get(r['image']) != r['caption']]
        if changed:
            for i in changed:
                print(f'caption changed: {i}: judged "{next(r["caption"] for r in rows if r["image"] == i)}", now "{caps.get(i)}"')
            raise SystemExit(f'{len(changed)} of {len(rows)} captions differ from the judged ones: judge them again')
    n = collections.Counter(r['judgement'] for r in rows)
    models = sorted({r.get('model', '?') for r in rows})
    print(f'{n["yes"]} yes, {n["partly"]} partly, {n["no"]} no of {len(rows)} '
          f'({100 * n["yes"] / len(rows):.1f}% yes; yes + partly {100 * (n["yes"] + n["partly"]) / len(rows):.1f}%)')
    for m in models:
        print(f'model: {m}')
    for title, key in (('by main subject', lambda r: r.get('subject_kind', '?')),
                       ('by source', lambda r: r['image'].split('-', 1)[0])):
        groups = collections.defaultdict(collections.Counter)
        for r in rows:
            groups[key(r)][r['judgement']] += 1
        print(title + ':')
        for g, c in sorted(groups.items()):
            print(f'  {g:13s} {c["yes"]:3d} yes {c["partly"]:3d} partly {c["no"]:3d} no  (of {sum(c.values())})')


if __name__ == '__main__':
    main()
