#!/usr/bin/env python3
"""Coefficients of the engine's tanh: tanh(x) ~ x*P(x^2)/Q(x^2) on [0, c], P(0) = Q(0) = 1.

The tool that produced the committed constants of src/kernels/kernels_simd.hpp (tanh_batch); rerun it to check them
or to fit another degree or clamp:

    python3 scripts/fit-tanh.py 5 3 7.9      # degrees of P and Q in x^2, the clamp c (the committed fit)

Output: three lines on stdout, nothing written to disk:
    largest relative error, exact arithmetic: <e>
    P: p1, p2, ...           (x^2 upwards, each rounded to float and printed as a Python float)
    Q: q1, q2, ...
The constants are copied into tanh_batch by hand (highest power first there). About half a minute of CPU time.

Minimises the largest relative error over 1,500 points clustered at both ends of [0, c]: each pass solves the
linearised problem x*P - f*Q = 0 weighted by 1/(f*Q_previous) (Loeb), and the weights follow Lawson's update
(w <- w*error), which drives the least-squares fit towards the minimax one. Prints the best pass's error in exact
arithmetic and the coefficients rounded to float, P's from x^2 upwards, then Q's (src/kernels/kernels_simd.hpp,
tanh_batch, writes them highest first). The kernel test measures the float evaluation ("kernels: activations").
Needs mpmath (Debian: apt-get install python3-mpmath).
"""
import struct
import sys

try:
    import mpmath as mp
except ImportError:
    sys.exit("fit-tanh: needs mpmath (apt-get install python3-mpmath, or pip install mpmath)")

mp.mp.dps = 40


def fit(m, n, c, points=1500, passes=60):
    xs = [c * (1 - mp.cos(mp.pi * (i + mp.mpf(0.5)) / points)) / 2 for i in range(points)]
    xs = [x for x in xs if x > mp.mpf('1e-4')]
    fs = [mp.tanh(x) for x in xs]
    weights = [mp.mpf(1)] * len(xs)
    q_prev = [mp.mpf(1)] * len(xs)
    best = None
    for _ in range(passes):
        rows, rhs = [], []
        for x, f, w, qp in zip(xs, fs, weights, q_prev):
            s, scale = x * x, mp.sqrt(w) / (f * qp)
            rows.append([x * s ** (k + 1) * scale for k in range(m)] + [-f * s ** (k + 1) * scale for k in range(n)])
            rhs.append((f - x) * scale)
        a, b = mp.matrix(rows), mp.matrix(rhs)
        sol = mp.lu_solve(a.T * a, a.T * b)
        p, q = [sol[k] for k in range(m)], [sol[m + k] for k in range(n)]
        errors, q_prev = [], []
        for x, f in zip(xs, fs):
            s = x * x
            pv = 1 + sum(pk * s ** (k + 1) for k, pk in enumerate(p))
            qv = 1 + sum(qk * s ** (k + 1) for k, qk in enumerate(q))
            errors.append(abs(x * pv / qv - f) / f)
            q_prev.append(qv)
        worst = max(errors)
        if best is None or worst < best[0]:
            best = (worst, p, q)
        total = sum(w * e for w, e in zip(weights, errors))
        weights = [w * e / total for w, e in zip(weights, errors)]
    return best


def to_float(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    worst, p, q = fit(int(sys.argv[1]), int(sys.argv[2]), mp.mpf(sys.argv[3]))
    print('largest relative error, exact arithmetic:', mp.nstr(worst, 4))
    print('P:', ', '.join(repr(to_float(v)) for v in p))
    print('Q:', ', '.join(repr(to_float(v)) for v in q))
