// record.js — what the page of one record (a document or an image) shares: loading it
// (a missing one says so, with the way back), the link back to the list, and deleting
// it after a confirmation.
import {api} from './api.js';
import {confirmDialog, fill, h, toast} from './ui.js';
import {navigate} from './nav.js';

const TITLE = {documents: 'Document', images: 'Image'};

export const backLink = (kind) => h('p', {class: 'small'}, h('a', {href: `#/${kind}`, text: `← All ${kind}`}));

// The page's box; load() fetches /kind/id and calls show(record).
export function recordPage(root, kind, id, show) {
  // drawn as the record's top will be (the link back, the title beside the star's room),
  // so that nothing moves when it comes (layout shift)
  const box = h('div', {'aria-busy': 'true'}, backLink(kind),
    h('div', {class: 'head'}, h('h1', {text: TITLE[kind]}), h('span', {class: 'star-room', 'aria-hidden': 'true'})));
  root.append(box);
  async function load() {
    try {
      const {data} = await api('GET', `/${kind}/${id}`);
      show(data);
      focusHeading(box);
    } catch (err) {
      if (err.status === 401) return;
      fill(box, h('h1', {text: TITLE[kind]}), h('div', {class: 'alert', role: 'alert', text: err.message}),
        h('a', {class: 'btn', href: `#/${kind}`, text: `← All ${kind}`}));
      focusHeading(box);
    } finally { box.setAttribute('aria-busy', 'false'); }
  }
  return {box, load};
}

// After a record's page is drawn (again): the focus, if it fell to <body> (the element
// that had it was replaced, as the placeholder heading focused on opening the page is),
// goes to the record's heading (tabindex=-1), not lost.
export function focusHeading(box) {
  const a = document.activeElement;
  if (a && a !== document.body && a.isConnected) return;
  const h1 = box.querySelector('h1');
  if (!h1) return;
  h1.tabIndex = -1;
  h1.focus({preventScroll: true});
}

// Asks, deletes, says so and goes back to the list.
export async function removeRecord(kind, rec, question, detail) {
  if (!await confirmDialog(question, detail, 'Delete')) return;
  try {
    await api('DELETE', `/${kind}/${rec.id}`);
    toast(`Deleted “${rec.name}”.`);
    navigate(`#/${kind}`);
  } catch (err) {
    if (err.status !== 401) toast(err.message);
  }
}
