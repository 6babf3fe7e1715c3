// webhooks.js — the Webhooks page (API.md §22): the user's endpoints (GET /webhooks),
// a new one (its secret shown once, with Copy: kept in no address, history entry or
// storage), the events each takes, pause and resume (PATCH enabled), a new secret
// (rotate, shown once), a test delivery (ping), delete (asking first), and each
// endpoint's deliveries (GET /webhooks/{id}/deliveries) with their states and Retry on a
// failed one. A read-only session sees the endpoints and deliveries, no control.
import {api} from './api.js';
import {clearErrors, confirmDialog, field, fill, formAlert, h, nextId, setTitle, showErrors, timeEl, toast} from './ui.js';

export const EVENT_TYPES = [
  ['document.completed', 'A document is written'], ['document.failed', 'A document fails'],
  ['document.revised', 'A document gets a new revision'], ['document.deleted', 'A document is deleted'],
  ['image.completed', 'An image is made'], ['image.failed', 'An image fails'],
  ['image.revised', 'An image gets a new revision'], ['image.deleted', 'An image is deleted'],
];
const STATES = {pending: 'Pending', delivered: 'Delivered', failed: 'Failed'};

// A secret (or key) shown once: a read-only field with Copy.
export function shownOnce(label, value, what) {
  const out = h('input', {type: 'text', readonly: true, value, name: 'new_secret', spellcheck: 'false'});
  const copy = h('button', {type: 'button', class: 'btn', text: 'Copy', onclick: async () => {
    try { await navigator.clipboard.writeText(out.value); toast('Copied.'); } catch { out.select(); }
  }});
  return h('div', {class: 'alert warn new-secret', role: 'status'},
    h('p', {}, h('strong', {text: `${what}, shown this once: `}), 'copy it now; it cannot be shown again.'),
    field(label, out), copy);
}

function eventsFieldset(chosen) {
  const all = h('input', {type: 'checkbox', name: 'ev_all', value: '*', checked: chosen.includes('*')});
  const boxes = EVENT_TYPES.map(([v, l]) => h('input', {type: 'checkbox', name: 'ev', value: v,
    checked: chosen.includes('*') || chosen.includes(v), disabled: chosen.includes('*')}));
  all.addEventListener('change', () => { for (const b of boxes) { b.disabled = all.checked; if (all.checked) b.checked = true; } });
  const errId = nextId('ev');
  const fs = h('fieldset', {class: 'field events', 'data-field': 'events'},
    h('legend', {text: 'Events'}),
    h('label', {class: 'check'}, all, ' Every event (later ones included)'),
    h('div', {class: 'checks'}, boxes.map((b, i) => h('label', {class: 'check'}, b, ' ', EVENT_TYPES[i][1], ' ',
      h('code', {class: 'small', text: EVENT_TYPES[i][0]})))),
    h('p', {class: 'err', id: errId, hidden: true}));
  fs.value = () => (all.checked ? '*' : boxes.filter((b) => b.checked).map((b) => b.value).join(','));
  return fs;
}

export function hooksView(root) {
  setTitle('Webhooks');
  const list = h('div', {'aria-busy': 'true'});
  const slot = h('div', {class: 'regen', hidden: true});
  const once = h('div', {'aria-live': 'polite'});
  const newBtn = h('button', {type: 'button', class: 'btn primary', 'data-write': '', text: '+ New endpoint', 'aria-expanded': 'false'});
  root.append(h('div', {class: 'head'}, h('h1', {text: 'Webhooks'}), newBtn),
    h('p', {class: 'muted', text: 'inkwell tells your endpoints when a document or an image is done, fails, changes or is deleted: a signed POST (Standard Webhooks), sent again until your endpoint answers 2xx.'}),
    once, slot, list);

  async function load() {
    list.setAttribute('aria-busy', 'true');
    try {
      const {data} = await api('GET', '/webhooks', {query: {per_page: 100}});
      fill(list, data.length ? h('ul', {class: 'cards hooks'}, data.map(card))
        : h('p', {class: 'panel muted', text: 'No endpoints yet. “+ New endpoint” makes one.'}));
    } catch (err) {
      if (err.status !== 401) fill(list, h('div', {class: 'alert', role: 'alert', text: err.message}));
    } finally { list.setAttribute('aria-busy', 'false'); }
  }

  function showSecret(w, title) {
    fill(once, shownOnce(`Signing secret of ${w.url}`, w.secret, title));
    once.querySelector('input').focus();
  }

  newBtn.addEventListener('click', () => {
    if (!slot.hidden) return;
    const url = h('input', {type: 'url', name: 'url', required: true, placeholder: 'https://example.com/inkwell', spellcheck: 'false'});
    const desc = h('input', {type: 'text', name: 'description', maxlength: '255'});
    const evs = eventsFieldset(['document.completed', 'document.failed']);
    const save = h('button', {type: 'submit', class: 'btn primary', text: 'Create endpoint'});
    const cancel = h('button', {type: 'button', class: 'btn', text: 'Cancel'});
    const form = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'wh-new-h'},
      h('h2', {id: 'wh-new-h', text: 'New endpoint'}), formAlert(),
      field('URL', url, {name: 'url', hint: 'http or https; inkwell POSTs each event here.'}),
      field('Description (optional)', desc, {name: 'description'}), evs,
      h('div', {class: 'actions'}, save, cancel));
    const close = () => { slot.hidden = true; clear(); newBtn.setAttribute('aria-expanded', 'false'); };
    const clear = () => slot.replaceChildren();
    cancel.addEventListener('click', () => { close(); newBtn.focus(); });
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { close(); newBtn.focus(); } });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(form);
      const events = evs.value();
      if (!url.value.trim() || !events) {
        return showErrors(form, {fields: {...(url.value.trim() ? {} : {url: ['Enter the URL to send to.']}),
          ...(events ? {} : {events: ['Choose at least one event.']})}});
      }
      save.disabled = true;
      try {
        const {data} = await api('POST', '/webhooks', {body: {url: url.value.trim(), description: desc.value, events}});
        close();
        toast('Endpoint made.');
        await load();
        showSecret(data, 'The signing secret');
      } catch (err) { showErrors(form, err); } finally { save.disabled = false; }
    });
    fill(slot, form);
    slot.hidden = false;
    newBtn.setAttribute('aria-expanded', 'true');
    url.focus();
  });

  function card(w) {
    const li = h('li', {class: 'card hook'});
    const deliveries = h('div', {class: 'deliveries', hidden: true});
    const label = w.description || w.url;
    const toggleDeliveries = h('button', {type: 'button', class: 'btn small', text: 'Deliveries', 'aria-expanded': 'false',
      'aria-label': `Deliveries of ${label}`, onclick: async () => {
        const open = deliveries.hidden;
        deliveries.hidden = !open;
        toggleDeliveries.setAttribute('aria-expanded', String(open));
        if (open) await loadDeliveries(w, deliveries);
      }});
    const act = async (fn, done) => {
      try { const r = await fn(); if (done) done(r); } catch (err) { if (err.status !== 401) toast(err.message); }
    };
    fill(li, h('div', {class: 'body'},
      h('h2', {class: 'title'}, h('span', {class: 'url', text: w.url}),
        h('span', {class: 'badge ' + (w.enabled ? 'completed' : 'queued'), text: w.enabled ? 'Active' : 'Paused'})),
      w.description ? h('p', {class: 'tdesc', text: w.description}) : null,
      h('p', {class: 'small'}, 'Events: ', w.events.includes('*') ? 'every event'
        : w.events.map((e, i) => [i ? ', ' : '', h('code', {text: e})])),
      h('p', {class: 'small muted'}, 'Made ', timeEl(w.created_at)),
      h('div', {class: 'actions'},
        toggleDeliveries,
        h('button', {type: 'button', class: 'btn small', 'data-write': '', text: w.enabled ? 'Pause' : 'Resume',
          'aria-label': `${w.enabled ? 'Pause' : 'Resume'} ${label}`, onclick: () => act(
            () => api('PATCH', `/webhooks/${w.id}`, {body: {enabled: w.enabled ? 'false' : 'true'}}),
            async () => { toast(w.enabled ? 'Paused: events wait until you resume.' : 'Resumed.'); await load();
              list.querySelector(`[data-hook="${w.id}"] button[aria-label^="${w.enabled ? 'Resume' : 'Pause'}"]`)?.focus(); })}),
        h('button', {type: 'button', class: 'btn small', 'data-write': '', text: 'Send a test', 'aria-label': `Send a test event to ${label}`,
          onclick: () => act(() => api('POST', `/webhooks/${w.id}/ping`), () => {
            toast('Test event queued.');
            if (!deliveries.hidden) loadDeliveries(w, deliveries);
          })}),
        h('button', {type: 'button', class: 'btn small', 'data-write': '', text: 'New secret', 'aria-label': `New secret for ${label}`,
          onclick: async () => {
            if (!await confirmDialog('Make a new signing secret?', 'For 24 hours deliveries are signed with both the old and the new secret; then with the new one only.', 'Make it')) return;
            act(() => api('POST', `/webhooks/${w.id}/rotate`), ({data}) => showSecret(data, 'The new signing secret'));
          }}),
        h('button', {type: 'button', class: 'btn small danger', 'data-write': '', text: 'Delete', 'aria-label': `Delete ${label}`,
          onclick: async () => {
            if (!await confirmDialog('Delete this endpoint?', `${w.url} gets no more events; its deliveries are forgotten.`, 'Delete')) return;
            act(() => api('DELETE', `/webhooks/${w.id}`), async () => { toast('Endpoint deleted.'); await load(); newBtn.focus(); });
          }})),
      deliveries));
    li.dataset.hook = w.id;
    return li;
  }

  async function loadDeliveries(w, box) {
    box.setAttribute('aria-busy', 'true');
    try {
      const {data, meta} = await api('GET', `/webhooks/${w.id}/deliveries`, {query: {per_page: 25}});
      if (!data.length) { fill(box, h('p', {class: 'muted small', text: 'No deliveries yet.'})); return; }
      const rows = data.map((d) => h('tr', {},
        h('td', {}, h('code', {text: d.type})),
        h('td', {text: d.record_id ? `#${d.record_id}` : '—'}),
        h('td', {}, h('span', {class: 'badge ' + ({delivered: 'completed', failed: 'failed'}[d.state] || 'queued'), text: STATES[d.state] || d.state})),
        h('td', {text: String(d.attempts)}),
        h('td', {text: [d.last_status ? `HTTP ${d.last_status}` : '', d.last_error || ''].filter(Boolean).join(' · ') || '—'}),
        h('td', {}, timeEl(d.created_at)),
        h('td', {}, d.state === 'failed' ? h('button', {type: 'button', class: 'link', 'data-write': '', text: 'Retry',
          'aria-label': `Retry delivery ${d.id}`, onclick: async (e) => {
            e.target.disabled = true;
            try {
              await api('POST', `/webhooks/${w.id}/deliveries/${d.id}/retry`);
              toast('Sent again.');
              await loadDeliveries(w, box);
              box.querySelector('caption')?.focus();
            } catch (err) { e.target.disabled = false; if (err.status !== 401) toast(err.message); }
          }}) : '')));
      fill(box, h('div', {class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Deliveries of ${w.url}`},
        h('table', {class: 'deliveries-table'},
          h('caption', {tabindex: '-1', text: `Deliveries, newest first (${data.length} of ${meta.total})`}),
          h('thead', {}, h('tr', {}, ['Event', 'Record', 'State', 'Attempts', 'Last answer', 'Made', 'Retry'].map((t) => h('th', {scope: 'col', text: t})))),
          h('tbody', {}, rows))),
      h('button', {type: 'button', class: 'btn small', text: 'Refresh', 'aria-label': `Refresh the deliveries of ${w.url}`,
        onclick: () => loadDeliveries(w, box)}));
    } catch (err) {
      if (err.status !== 401) fill(box, h('div', {class: 'alert', role: 'alert', text: err.message}));
    } finally { box.setAttribute('aria-busy', 'false'); }
  }

  load();
  return {unmount() { once.replaceChildren(); }};
}
