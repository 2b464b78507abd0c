// The heat overlay, shared by the caption and VQA demos (and any view of attention over an image grid): a gh × gw
// attention grid upsampled bilinearly onto a drawn image on heat.js's colour scale, and its peak cell boxed.
import { heatLayer, peakCell } from './heat.js';

/** Draws grid `data` (gh × gw) as a heat layer over the box (x, y, w, h) of `ctx`, alpha times `opacity`. */
export function drawHeat(ctx, { data, gh, gw }, { x, y, w, h }, opacity) {
  const ox = Math.round(x);
  const oy = Math.round(y);
  const ow = Math.max(1, Math.round(w));
  const oh = Math.max(1, Math.round(h));
  const layer = new OffscreenCanvas(ow, oh);
  layer.getContext('2d').putImageData(new ImageData(heatLayer(data, gh, gw, oh, ow, opacity), ow, oh), 0, 0);
  ctx.drawImage(layer, ox, oy);
}

/**
 * Boxes the grid's peak cell inside the box (x, y, w, h): white with a dark outline, readable on any colour. Returns
 * { peak: { row, col, value }, rect: [x, y, w, h] of the stroke } or null for an empty grid.
 */
export function boxPeak(ctx, { data, gh, gw }, { x, y, w, h }) {
  const peak = peakCell(data, gw);
  if (!peak) return null;
  const cw = w / gw;
  const ch = h / gh;
  const rect = [x + peak.col * cw + 1, y + peak.row * ch + 1, cw - 2, ch - 2];
  ctx.lineWidth = 4;
  ctx.strokeStyle = 'rgba(0, 0, 0, 0.7)';
  ctx.strokeRect(...rect);
  ctx.lineWidth = 2;
  ctx.strokeStyle = '#fff';
  ctx.strokeRect(...rect);
  return { peak, rect };
}
