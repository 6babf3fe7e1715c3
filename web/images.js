// images.js — the image pages: the gallery of lazily loaded thumbnails, one image
// (full view, rename, favourite, regenerate, its revisions, download the PNG, delete) and
// "create an image"
// with a progress state while the picture is made.
import {api, ApiError, RESOLUTIONS, sleep, stream} from './api.js';
import {clearErrors, field, fill, formAlert, h, nextId, select, setTitle, showErrors, starButton,
  stateBadge, timeEl, toast} from './ui.js';
import {revisionsPanel} from './revisions.js';
import {refreshMeter} from './account.js';
import {FAVS, listView} from './list.js';
import {navigate, setGuard} from './nav.js';
import {backLink, focusHeading, recordPage, removeRecord} from './record.js';
import {tagChips, tagFilter, tagsEditor} from './tags.js';

const STYLES = [['', 'Any style'], ['vivid', 'Vivid'], ['natural', 'Natural']];
const favorite = (id, fav) => api('PATCH', `/images/${id}`, {body: {favorite: fav ? '1' : '0'}});
const size = (res) => (res || '1024x1024').split('x').map(Number);

// the PNG from this server by its path (the record's absolute url names the public
// address, which may differ from the one this page was opened at)
const src = (url) => { try { const u = new URL(url, location.href); return u.pathname.startsWith('/media/') ? u.pathname : url; } catch { return url; } };

function picture(img, cls) {
  const [w, hgt] = size(img.resolution);
  return h('img', {src: src(img.url), alt: img.name, width: String(w), height: String(hgt), class: cls, decoding: 'async'});
}

// A gallery tile's picture: the server's square thumbnail (GET /media/<key>.png?w=N,
// the centre of the picture), 256 px, 512 px on a screen of two pixels to the point.
// Lazily loaded, but the first two (a phone's first row: eager): those are seen at once, and
// waiting for layout to start them made Lighthouse's largest paint late on a phone.
const THUMB = 256;
const EAGER = 2; // a phone's first row
function thumbnail(img, eager = false) {
  const u = src(img.url);
  // by width: a phone's tile (half the screen, ~206 px at 1.75 device pixels a point) takes
  // the 384 px one, not 512 (a PNG of 117-164 KB on slow 4G: Lighthouse's largest paint)
  return h('img', {src: `${u}?w=${THUMB}`, srcset: [1, 1.5, 2].map((x) => `${u}?w=${THUMB * x} ${THUMB * x}w`).join(', '),
    sizes: `(max-width: 560px) 50vw, ${THUMB}px`, alt: img.name,
    width: String(THUMB), height: String(THUMB), loading: eager ? 'eager' : 'lazy', decoding: 'async'});
}

export function imgList(root, route) {
  const view = listView(root, route, {
    path: '/images', title: 'Images', noun: 'images', newLabel: '+ New image', bulk: 'images',
    filters: [
      {name: 'search', label: 'Search by name', class: 'grow', placeholder: 'Words in the name'},
      {name: 'resolution', label: 'Resolution', options: [['', 'Any size'], ...RESOLUTIONS]},
      {name: 'style', label: 'Style', options: STYLES},
      {name: 'favorite', label: 'Favourites', options: FAVS},
      {name: 'tag', label: 'Tag', options: [['', 'All tags']]},
    ],
    render: (data) => h('ul', {class: 'gallery'}, data.data.map((img, i) => h('li', {class: 'tile', 'data-id': img.id, 'data-name': img.name},
      h('a', {class: 'thumb', href: `#/images/${img.id}`, 'aria-label': img.url ? null : `${img.name} (${img.state})`},
        img.url ? thumbnail(img, i < EAGER)
          : h('span', {class: 'placeholder'}, stateBadge(img), img.state === 'failed' ? h('span', {class: 'small', text: img.error || ''}) : null)),
      h('div', {class: 'cap'},
        h('a', {class: 'name', href: `#/images/${img.id}`, text: img.name, title: img.name, tabindex: '-1'}),
        starButton(img, (fav) => favorite(img.id, fav))),
      tagChips(img.tags, 'images')))),
  });
  tagFilter(root, route, 'images');
  return view;
}

// The picture at its full size, in a modal dialog that scrolls (Escape, Close or a
// click outside the picture closes it; the focus goes back to the button).
function fullSize(img, opener) {
  const [w, hgt] = size(img.resolution);
  const titleId = nextId('full');
  const close = h('button', {type: 'button', class: 'btn', text: 'Close'});
  const dlg = h('dialog', {class: 'full-view', 'aria-labelledby': titleId},
    h('div', {class: 'full-head'}, h('h2', {id: titleId, text: `${img.name} (${w} × ${hgt})`}), close),
    h('div', {class: 'full-pic', tabindex: '0', role: 'region', 'aria-label': 'The picture at full size'}, picture(img, 'natural')));
  // closed too when the page changes under it (back, a link of the header)
  const gone = () => { window.removeEventListener('hashchange', gone); dlg.close(); dlg.remove(); };
  const done = () => { gone(); opener.focus(); };
  window.addEventListener('hashchange', gone);
  close.addEventListener('click', done);
  dlg.addEventListener('cancel', (e) => { e.preventDefault(); done(); });
  dlg.addEventListener('click', (e) => { if (e.target === dlg) done(); });
  document.body.append(dlg);
  dlg.showModal();
  close.focus();
}

export function imgView(root, route) {
  let ctrl = null;
  const {box, load} = recordPage(root, 'images', route.id, (img) => show(img));

  function show(img) {
    setTitle(img.name);
    const title = h('h1', {text: img.name, tabindex: '-1'});
    const name = h('input', {type: 'text', name: 'name', value: img.name, maxlength: '255', required: true});
    const rename = h('form', {class: 'rename', novalidate: true, 'data-write': ''}, formAlert(), field('Name', name),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn', text: 'Rename'})));
    rename.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(rename);
      try {
        const {data} = await api('PATCH', `/images/${img.id}`, {body: {name: name.value}});
        toast('Renamed.');
        show(data);
        box.querySelector('h1').focus();
      } catch (err) { if (err.status !== 401) showErrors(rename, err); }
    });
    const [w, hgt] = size(img.resolution);
    const regen = h('div', {class: 'regen', hidden: true});
    const pic = h('section', {'aria-label': 'Picture'}, img.url ? picture(img, 'full')
      : h('div', {class: 'panel live status'}, img.state === 'failed' ? stateBadge(img)
        : [h('span', {class: 'spinner', 'aria-hidden': 'true'}), h('span', {text: 'The picture is being made…'})]));
    const again = h('button', {type: 'button', class: 'btn', 'data-write': '', text: img.state === 'failed' ? 'Try again' : 'Regenerate',
      'aria-expanded': 'false', onclick: () => regenerate(img, again, regen, pic)});
    fill(box, 
      backLink('images'),
      h('div', {class: 'head'}, title, starButton(img, (fav) => favorite(img.id, fav))),
      img.state === 'failed' ? h('div', {class: 'alert', role: 'alert', text: `Generation failed: ${img.error || 'no reason given.'}`}) : null,
      img.state !== 'failed' && img.error ? h('div', {class: 'alert', role: 'alert', text: `The last regeneration failed: ${img.error} The picture is the latest revision.`}) : null,
      regen,
      h('div', {class: 'layout'}, pic,
        h('aside', {class: 'panel', 'aria-label': 'Details'},
          h('dl', {class: 'facts'},
            h('dt', {text: 'Description'}), h('dd', {text: img.description}),
            h('dt', {text: 'Size'}), h('dd', {text: `${w} × ${hgt}`}),
            h('dt', {text: 'Style'}), h('dd', {text: img.style ? img.style[0].toUpperCase() + img.style.slice(1) : 'Not given'}),
            h('dt', {text: 'State'}), h('dd', {}, img.state === 'completed' ? 'Completed' : stateBadge(img)),
            h('dt', {text: 'Revision'}), h('dd', {class: 'revision', text: img.revision ? String(img.revision) : 'None yet'}),
            h('dt', {text: 'Created'}), h('dd', {}, timeEl(img.created_at)),
            h('dt', {text: 'Updated'}), h('dd', {}, timeEl(img.updated_at))),
          tagsEditor(img, 'images', (r) => { img = r; }),
          rename,
          h('div', {class: 'actions'},
            img.state === 'completed' || img.state === 'failed' ? again : null,
            img.url ? h('button', {type: 'button', class: 'btn', text: 'View full size', onclick: (e) => fullSize(img, e.currentTarget)}) : null,
            img.url ? h('a', {class: 'btn', href: src(img.url), download: `${img.name}.png`, text: 'Download PNG'}) : null,
            h('button', {type: 'button', class: 'btn danger', 'data-write': '', text: 'Delete', onclick: () => remove(img)})))),
      img.revision ? revisionsPanel('images', img, {restored: (r) => show(r), thumb: (rev) => thumbnail({...rev, name: `Revision ${rev.number}: ${rev.description}`})}) : null);
    focusHeading(box);
    if (img.state === 'queued' || img.state === 'generating') {
      ctrl?.abort();
      ctrl = new AbortController();
      const mine = ctrl;
      stream('GET', `/images/${img.id}`, {signal: mine.signal})
        .then((final) => { if (mine === ctrl) show(final); })
        .catch((err) => { if (err.name !== 'AbortError' && err.status !== 401 && mine === ctrl) load(); });
    }
  }

  // Regenerate (Try again on a failed one): description, size and style, changed or
  // not; the picture on screen stays until the new one is done (§16).
  function regenerate(img, button, regen, pic) {
    const close = () => { regen.hidden = true; button.setAttribute('aria-expanded', 'false'); button.focus(); };
    if (!regen.hidden) return close();
    const desc = h('textarea', {name: 'description', value: img.description, required: true});
    const res = select('resolution', RESOLUTIONS, img.resolution);
    // an empty style is "not sent" (the record's is kept), so "Not given" only while it is
    const styles = [['', 'Not given'], ['vivid', 'Vivid (saturated colours)'], ['natural', 'Natural (muted colours)']];
    const style = select('style', img.style ? styles.slice(1) : styles, img.style || '');
    const submit = h('button', {type: 'submit', class: 'btn primary', text: button.textContent});
    const titleId = nextId('h');
    const form = h('form', {class: 'panel', novalidate: true, 'aria-labelledby': titleId},
      h('h2', {id: titleId, text: 'Make the picture again'}),
      h('p', {class: 'muted small', text: 'Change the description, size or style if you like. The current picture is kept as a revision: you can restore it.'}),
      formAlert(), field('Description', desc), h('div', {class: 'options'}, field('Size', res), field('Style', style)),
      h('div', {class: 'actions'}, submit, h('button', {type: 'button', class: 'btn', text: 'Cancel', onclick: close})));
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); close(); } });
    fill(regen, form);
    regen.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    desc.focus();
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(form);
      submit.disabled = true;
      ctrl?.abort();
      ctrl = new AbortController();
      const mine = ctrl;
      let started = false;
      setGuard(() => (mine === ctrl && !mine.signal.aborted ? 'The picture is being made again. If you leave, it goes on on the server.' : ''));
      try {
        const final = await stream('POST', `/images/${img.id}/regenerate`, {body: {description: desc.value, resolution: res.value, style: style.value}, signal: mine.signal,
          record: () => {
            if (started) return;
            started = true;
            regen.hidden = true;
            pic.prepend(h('div', {class: 'panel live status', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}),
              h('span', {text: 'Making the picture again… the one below stays until the new one is done.'})));
          }});
        setGuard(null);
        if (mine !== ctrl) return;
        toast(`Made again: revision ${final.revision}.`);
        refreshMeter();
        show(final);
      } catch (err) {
        if (err.name === 'AbortError') return;
        setGuard(null);
        if (err.status === 401) return;
        if (!started) { submit.disabled = false; showErrors(form, err); return; }
        toast(err.message);
        if (mine === ctrl) load();
      }
    });
  }

  const remove = (img) => removeRecord('images', img, 'Delete this image?', `“${img.name}” and its picture will be deleted for good.`);

  load();
  return {unmount: () => { ctrl?.abort(); setGuard(null); }};
}

export function imgNew(root) {
  let ctrl = null;
  const name = h('input', {type: 'text', name: 'name', maxlength: '255', required: true, autocomplete: 'off'});
  const desc = h('textarea', {name: 'description', required: true, placeholder: 'What should the picture show?'});
  const res = h('fieldset', {'data-field': 'resolution'}, h('legend', {text: 'Size'}),
    h('div', {class: 'levels'}, RESOLUTIONS.map(([v, label], i) => h('label', {},
      h('input', {type: 'radio', name: 'resolution', value: v, checked: i === 0}), label))),
    h('p', {class: 'err', id: 'res-err', hidden: true}));
  const style = select('style', [['', 'Not given'], ['vivid', 'Vivid (saturated colours)'], ['natural', 'Natural (muted colours)']], '');
  const submit = h('button', {type: 'submit', class: 'btn primary', text: 'Create image'});
  const form = h('form', {class: 'panel', novalidate: true},
    formAlert(), field('Name', name), field('Description', desc, {hint: 'Up to 4,000 characters.'}),
    res, field('Style', style), h('div', {class: 'actions'}, submit));
  const progress = h('section', {class: 'panel live', hidden: true, 'aria-label': 'Progress'});
  root.append(backLink('images'),
    h('h1', {text: 'New image'}), form, progress);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {name: name.value, description: desc.value,
      resolution: form.querySelector('input[name=resolution]:checked')?.value ?? '',
      style: style.value || undefined};
    submit.disabled = true;
    ctrl = new AbortController();
    const mine = ctrl;
    const state = h('span', {text: 'Sending…'});
    // the stream of an image has no events between its record and its end (§10): its
    // state (queued, then generating) is read meanwhile with a show, so the words follow it
    const words = {queued: 'Queued: waiting for a worker…', generating: 'Drawing the picture…'};
    const say = (r) => { if (words[r.state]) state.textContent = words[r.state]; };
    const watchState = async (id) => {
      while (mine === ctrl && !mine.signal.aborted) {
        await sleep(500, mine.signal);
        const {data} = await api('GET', `/images/${id}`, {signal: mine.signal});
        if (mine === ctrl && state.isConnected && submit.disabled) say(data);
        if (data.state !== 'queued' && data.state !== 'generating') return;
      }
    };
    setGuard(() => (mine === ctrl && submit.disabled ? 'The picture is still being made. If you leave, it goes on being made on the server and appears in the gallery when it is done.' : ''));
    fill(progress, h('div', {class: 'status', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), state),
      h('progress', {'aria-label': 'Making the picture'}));
    progress.hidden = false;
    progress.scrollIntoView({block: 'nearest'});
    try {
      const final = await stream('POST', '/images', {body, signal: mine.signal,
        record: (r) => { say(r); watchState(r.id).catch(() => {}); }});
      setGuard(null);
      toast(`“${final.name}” is ready.`);
      navigate(`#/images/${final.id}`);
    } catch (err) {
      if (err.name === 'AbortError') return;
      setGuard(null);
      progress.hidden = true;
      if (err.status !== 401) showErrors(form, err instanceof ApiError ? err : new ApiError(0, String(err.message || err)));
    } finally {
      if (mine === ctrl) submit.disabled = false;
    }
  });
  return {unmount: () => ctrl?.abort()};
}
