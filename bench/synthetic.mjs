// Inputs the benchmarks make up rather than read: they cost the same as real ones and need no data files.

// A deterministic RGBA image with structure at several scales (the encoder's cost does not depend on content;
// different seeds give captions of different lengths).
export function syntheticImage(seed, width = 320, height = 240) {
  const px = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      px[i] = (x * 3 + seed * 40) & 255;
      px[i + 1] = (y * 5 + ((x >> 4) ^ (y >> 4)) * 17) & 255;
      px[i + 2] = ((x * y) >> 6) + seed * 13 & 255;
      px[i + 3] = 255;
    }
  }
  return { data: px, width, height, channels: 4 };
}
