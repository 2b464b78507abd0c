// The attention lab: every mechanism of the catalogue (docs/DESIGN.md §3) on input the person edits, each with its
// formula and paper, running the real ops through the package's public API on the main thread (they take
// microseconds). Three groups:
//   lab/panels-plane.js  one query and five keys in the plane (lab/plane.js): the six score functions, global soft
//                        attention with its masks, local-m / local-p, hard vs soft, key-value attention, two heads,
//                        structured self-attention, the relation network
//   lab/panels-text.js   typed text (toy word vectors, lab/words.js): co-attention (parallel, max-pooled,
//                        alternating), attention-over-attention, hierarchical attention, the pointer network,
//                        coverage, Tang's position-weighted memories
//   lab/panels-image.js  visual soft attention over an example image's 8 × 8 grid
// Every panel publishes what it ran and drew (data-op, data-calls, data-weights: see lab/ui.js).
import { Plane } from './lab/plane.js';
import { setupPlanePanels } from './lab/panels-plane.js';
import { setupTextPanels } from './lab/panels-text.js';
import { setupImagePanel } from './lab/panels-image.js';

export function setupLab() {
  let plane = null;
  const panels = setupPlanePanels(document.getElementById('mechanisms'), () => plane.changed());
  plane = new Plane(document.getElementById('plane'), document.getElementById('selected'), {
    onChange: () => panels.update(plane),
    weights: () => panels.lines(),
  });
  plane.changed();
  setupTextPanels(document.getElementById('lab-text'));
  setupImagePanel(document.getElementById('lab-image'));
}
