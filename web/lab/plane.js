// The lab's plane: one query and five keys in [−RANGE, RANGE]², dragged with the mouse (or a finger), or moved
// with the arrow keys while the canvas has focus (Tab picks the next point, Escape leaves). The canvas carries
// data-points (JSON [[x, y], …], the query first) for tests and anyone else who wants to read it.
export const RANGE = 2.2;
export const KEY_COUNT = 5;

export class Plane {
  /** `onChange()` runs after every move; `weights()` gives the line thickness per key. */
  constructor(canvas, selectedLabel, { onChange, weights }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.label = selectedLabel;
    this.onChange = onChange;
    this.weights = weights;
    // points[0] is the query, points[1..] the keys.
    this.points = [[0.9, 0.5], [1.5, 0.2], [0.2, 1.4], [-1.2, 0.6], [-0.5, -1.3], [1.0, -1.1]];
    this.selected = 0;
    this.dragging = -1;
    this.wire();
  }

  get query() { return this.points[0]; }
  get keys() { return this.points.slice(1); }

  toCanvas([x, y]) {
    const { width, height } = this.canvas;
    return [((x + RANGE) / (2 * RANGE)) * width, ((RANGE - y) / (2 * RANGE)) * height];
  }

  fromCanvas(px, py) {
    const { width, height } = this.canvas;
    return [(px / width) * 2 * RANGE - RANGE, RANGE - (py / height) * 2 * RANGE];
  }

  changed() {
    this.onChange();
    this.draw();
  }

  draw() {
    const { ctx, canvas, points } = this;
    const weights = this.weights();
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.strokeStyle = '#e9ecef';
    ctx.lineWidth = 1;
    for (let v = -2; v <= 2; v++) {
      const [gx] = this.toCanvas([v, 0]);
      const [, gy] = this.toCanvas([0, v]);
      ctx.beginPath(); ctx.moveTo(gx, 0); ctx.lineTo(gx, canvas.height); ctx.stroke();
      ctx.beginPath(); ctx.moveTo(0, gy); ctx.lineTo(canvas.width, gy); ctx.stroke();
    }
    const [ox, oy] = this.toCanvas([0, 0]);
    const [qx, qy] = this.toCanvas(points[0]);
    // Lines from the query to each key, as thick as the scaled-dot weight.
    for (let i = 1; i < points.length; i++) {
      const [kx, ky] = this.toCanvas(points[i]);
      ctx.strokeStyle = 'rgba(28, 126, 214, 0.55)';
      ctx.lineWidth = 1 + 10 * (weights ? weights[i - 1] : 0);
      ctx.beginPath(); ctx.moveTo(qx, qy); ctx.lineTo(kx, ky); ctx.stroke();
    }
    ctx.strokeStyle = '#adb5bd';
    ctx.lineWidth = 1;
    ctx.beginPath(); ctx.arc(ox, oy, 3, 0, 2 * Math.PI); ctx.stroke();
    points.forEach((p, i) => {
      const [x, y] = this.toCanvas(p);
      ctx.fillStyle = i === 0 ? '#d6336c' : '#1c7ed6';
      ctx.beginPath(); ctx.arc(x, y, i === this.selected ? 10 : 8, 0, 2 * Math.PI); ctx.fill();
      if (i === this.selected) { ctx.strokeStyle = '#212529'; ctx.lineWidth = 2; ctx.stroke(); }
      ctx.fillStyle = '#212529';
      ctx.font = '12px system-ui, sans-serif';
      // The name above the point, or below it at the top edge; left of it at the right edge.
      const name = i === 0 ? 'q' : `k${i}`;
      ctx.fillText(name, x > canvas.width - 28 ? x - 26 : x + 11, y < 20 ? y + 21 : y - 9);
    });
    canvas.dataset.points = JSON.stringify(points);
    const s = this.selected;
    this.label.textContent = `selected: ${s === 0 ? 'query' : `key ${s}`} at (${points[s].map((v) => v.toFixed(2)).join(', ')})`;
  }

  pointerPos(ev) {
    const r = this.canvas.getBoundingClientRect();
    return [((ev.clientX - r.left) / r.width) * this.canvas.width, ((ev.clientY - r.top) / r.height) * this.canvas.height];
  }

  clamp([x, y]) {
    return [Math.max(-RANGE, Math.min(RANGE, x)), Math.max(-RANGE, Math.min(RANGE, y))];
  }

  wire() {
    const { canvas } = this;
    canvas.addEventListener('pointerdown', (ev) => {
      const [px, py] = this.pointerPos(ev);
      let best = -1;
      let bestDist = 20 * 20;
      this.points.forEach((p, i) => {
        const [x, y] = this.toCanvas(p);
        const d = (x - px) ** 2 + (y - py) ** 2;
        if (d < bestDist) { best = i; bestDist = d; }
      });
      if (best >= 0) {
        this.dragging = this.selected = best;
        canvas.setPointerCapture(ev.pointerId);
        this.changed();
      }
    });
    canvas.addEventListener('pointermove', (ev) => {
      if (this.dragging < 0) return;
      this.points[this.dragging] = this.clamp(this.fromCanvas(...this.pointerPos(ev)));
      this.changed();
    });
    canvas.addEventListener('pointerup', () => { this.dragging = -1; });
    canvas.addEventListener('keydown', (ev) => {
      const step = ev.shiftKey ? 0.5 : 0.1;
      const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
      if (ev.key === 'Tab') {
        // Tab cycles through the points while the plane has focus; Escape leaves it.
        this.selected = (this.selected + (ev.shiftKey ? this.points.length - 1 : 1)) % this.points.length;
      } else if (ev.key === 'Escape') {
        canvas.blur();
        return;
      } else if (moves[ev.key]) {
        const [dx, dy] = moves[ev.key];
        const p = this.points[this.selected];
        this.points[this.selected] = this.clamp([p[0] + dx, p[1] + dy]);
      } else {
        return;
      }
      ev.preventDefault();
      this.changed();
    });
  }
}
