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
