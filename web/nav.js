// nav.js — the address of a page: "#/path?query". navigate() changes it (a new
// history entry, or replacing the current one); app.js renders on every change.
export function parseHash() {
  const raw = location.hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const path = (q < 0 ? raw : raw.slice(0, q)) || '/';
  return {path, params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1))};
}

export function navigate(hash, {replace = false} = {}) {
  if (replace || location.hash === hash) {
    history.replaceState(null, '', hash);
    window.dispatchEvent(new Event('inkwell:route'));
  } else {
    location.hash = hash;
  }
}

// "#/documents" + {page: 2, search: ''} -> "#/documents?page=2" (empty values dropped)
export function hashFor(path, params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const s = q.toString();
  return '#' + path + (s ? '?' + s : '');
}

// A page with something that leaving would lose (an unsaved edit, a write running)
// sets a guard: a function that returns the sentence to ask with, or '' when nothing
// would be lost. app.js asks before an in-app move and the browser before unloading.
let guard = null;
export const setGuard = (fn) => { guard = fn; };
export const guardMessage = () => (guard ? guard() || '' : '');

// Scroll positions per history entry (each entry is tagged with an id in its state), so
// that Back to a list shows it where it was. app.js calls entryOpened() on each render;
// a list calls takeScroll() once its results are on the page.
const positions = new Map();
let pending = null;
export function entryOpened() {
  if (!history.state?.n) history.replaceState({n: `${Date.now()}-${Math.random()}`}, '', location.href);
  pending = positions.get(history.state.n) ?? null;
}
export const takeScroll = () => { const y = pending; pending = null; return y; };
history.scrollRestoration = 'manual';
window.addEventListener('scroll', () => { if (history.state?.n) positions.set(history.state.n, window.scrollY); }, {passive: true});
