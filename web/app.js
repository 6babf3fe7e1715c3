// app.js — inkwell's web app: boot, sign-in, the hash router and the page header.
// Pages live in documents.js, images.js, account.js and admin.js (an admin key gets the
// admin pages only); every call goes through api.js to the
// public API. The route and every list filter are in the address (#/documents?page=2),
// so back/forward and reload show the same page.
import {events, forgetTemplates, keyRole, signIn, signOut} from './api.js';
import {clear, confirmDialog, field, formAlert, h, setTitle, showErrors, toast} from './ui.js';
import {entryOpened, guardMessage, navigate, parseHash, setGuard} from './nav.js';
import {docList, docNew, docView} from './documents.js';
import {imgList, imgNew, imgView} from './images.js';
import {accountView, refreshMeter} from './account.js';
import {adminUserView, adminView} from './admin.js';
import {tplView} from './templates.js';
import {hooksView} from './webhooks.js';
import {installKeys} from './keys.js';

const main = document.getElementById('main');
let current = null;       // {name, view}
let signinNotice = '';    // why the user was sent back to sign-in
let shown = null;         // the address of the page on screen
const TITLES = {signin: 'Sign in', documents: 'Documents', 'doc-new': 'New document', doc: 'Document',
  notfound: 'Page not found', images: 'Images', 'img-new': 'New image', img: 'Image', account: 'Account', templates: 'My templates', webhooks: 'Webhooks', admin: 'Administration', 'admin-user': 'User'};

const routes = [
  [/^\/signin$/, 'signin', signinView],
  [/^\/documents$/, 'documents', docList],
  [/^\/documents\/new$/, 'doc-new', docNew],
  [/^\/documents\/(\d+)$/, 'doc', docView],
  [/^\/images$/, 'images', imgList],
  [/^\/images\/new$/, 'img-new', imgNew],
  [/^\/images\/(\d+)$/, 'img', imgView],
  [/^\/account$/, 'account', accountView],
  [/^\/templates$/, 'templates', tplView],
  [/^\/webhooks$/, 'webhooks', hooksView],
  [/^\/admin$/, 'admin', adminView],
  [/^\/admin\/users\/(\d+)$/, 'admin-user', adminUserView],
];

// `make run` prints http://HOST/#key=ink_...: the key is taken from the fragment (never
// sent to the server in an address, never in a Referer) whenever it appears — at load,
// or pasted into a tab where the app runs — and the history entry that holds it is
// replaced at once, so the key is in neither the address bar nor the history. It is
// turned into a session (POST /session with key, API.md §21) and forgotten.
async function takeKey() {
  if (!location.hash.startsWith('#key=')) return false;
  let key = '';
  try { key = decodeURIComponent(location.hash.slice(5)).trim(); } catch { /* a broken escape: no key */ }
  history.replaceState(null, '', location.pathname + location.search + '#/signin');
  if (!key) return false;
  setGuard(null);
  current = null;
  try {
    await signIn({key});
    forgetTemplates();
    history.replaceState(null, '', location.pathname + location.search + '#/documents');
  } catch (err) {
    signinNotice = err.status === 401 ? 'The key of this link was not accepted: it is wrong or has been revoked.' : err.message;
  }
  key = '';
  return false;
}

// An in-app move away from a page that would lose something: the address goes back to
// that page until the user says to leave.
async function guarded() {
  const msg = guardMessage();
  if (!msg || shown === null || location.hash === shown) return false;
  const target = location.hash;
  history.replaceState(history.state, '', shown);
  if (await confirmDialog('Leave this page?', msg, 'Leave')) { setGuard(null); navigate(target); }
  return true;
}

async function render() {
  if (!(await takeKey()) && await guarded()) return;
  const route = parseHash();
  // who is signed in (GET /me): a 401 means no one — the sign-in page (with where the
  // user was, to come back after)
  let admin = false, both = false, me = null;
  // no XSRF-TOKEN cookie: no session either (both are set together and cleared
  // together), so no request is needed to know it
  if (route.path !== '/signin' && !/(?:^|;\s*)(?:__Host-)?XSRF-TOKEN=./.test(document.cookie)) {
    const next = route.path === '/' || !location.hash.startsWith('#/') ? '' : '?next=' + encodeURIComponent(location.hash);
    history.replaceState(null, '', '#/signin' + next);
    return render();
  }
  if (route.path !== '/signin') {
    try { me = await keyRole(); admin = me.role === 'admin'; both = me.admin; } catch (err) {
      if (err.status === 401) {
        if (parseHash().path.startsWith('/signin')) return; // the 401's handler went there
        const next = route.path === '/' || !location.hash.startsWith('#/') ? '' : '?next=' + encodeURIComponent(location.hash);
        history.replaceState(null, '', '#/signin' + next);
        return render();
      }
      /* unreachable server: the page says so */
    }
    // a session of an admin key has the admin pages only, any other everything but
    // them (§19); an admin's own session has both (§21)
    if (!both && admin !== route.path.startsWith('/admin')) { history.replaceState(null, '', admin ? '#/admin' : '#/documents'); return render(); }
  }
  document.body.dataset.scope = me?.scope || '';
  // a read-only session makes nothing: its "new" pages are its lists
  if (me?.scope === 'read' && /^\/(documents|images)\/new$/.test(route.path)) {
    history.replaceState(null, '', '#' + route.path.replace(/\/new$/, ''));
    return render();
  }
  const hit = routes.map(([re, name, fn]) => [route.path.match(re), name, fn]).find(([m]) => m);
  // an address of no page: say so (the empty address and #/ are the first page)
  if (!hit && (route.path === '/' || route.path === '')) { history.replaceState(null, '', '#/documents'); return render(); }
  const [m, name, fn] = hit || [[], 'notfound', notFoundView];
  route.id = m[1] ? Number(m[1]) : null;
  shown = location.hash;
  entryOpened();
  document.getElementById('nav').hidden = name === 'signin';
  document.getElementById('nav').removeAttribute('data-pending'); // index.html: laid out, not shown
  // who is signed in: the user (GET /me), and the key's first characters for a session
  // made from a key
  document.getElementById('who').textContent = !me ? '' : me.prefix ? `${me.name} · ${me.prefix}…` : me.name;
  for (const a of document.querySelectorAll('[data-nav]')) {
    a.hidden = both ? false : (a.dataset.nav === 'admin') !== admin;
    const on = name.startsWith({documents: 'doc', images: 'im', templates: 'templates', webhooks: 'webhooks', account: 'account', admin: 'admin'}[a.dataset.nav]);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (current && current.name === name && current.view?.update && current.id === route.id) {
    current.view.update(route);
    return;
  }
  current?.view?.unmount?.();
  setGuard(null);
  if (name !== 'signin' && (!admin || both) && name !== 'account') refreshMeter();
  setTitle(TITLES[name]);
  clear(main);
  current = {name, id: route.id, view: fn(main, route)};
  const h1 = main.querySelector('h1');
  if (h1) { h1.tabIndex = -1; if (document.activeElement === document.body || !main.contains(document.activeElement)) h1.focus({preventScroll: true}); }
  window.scrollTo(0, 0);
}

function notFoundView(root) {
  root.append(h('h1', {text: 'Page not found'}),
    h('p', {text: 'There is no page at this address.'}),
    h('p', {}, h('a', {href: '#/documents', text: 'Go to your documents'})));
  return {};
}

// After a sign-in: where the user was, or their first page.
function afterSignin(route, role) {
  const next = route.params.get('next');
  navigate(next && next.startsWith('#/') && !next.startsWith('#/signin') ? next : role === 'admin' ? '#/admin' : '#/documents');
}

function signinView(root, route) {
  const name = h('input', {type: 'text', name: 'name', autocomplete: 'username', spellcheck: 'false', required: true});
  const password = h('input', {type: 'password', name: 'password', autocomplete: 'current-password', required: true});
  const submit = h('button', {type: 'submit', class: 'btn primary', text: 'Sign in'});
  const form = h('form', {class: 'panel narrow', novalidate: true},
    h('h1', {text: 'Sign in'}),
    formAlert(),
    field('Name', name, {name: 'name'}),
    field('Password', password, {name: 'password'}),
    h('div', {class: 'actions'}, submit));
  const input = h('input', {type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false',
    required: true, placeholder: 'ink_…'});
  const keySubmit = h('button', {type: 'submit', class: 'btn', text: 'Sign in with the key'});
  const keyForm = h('form', {class: 'panel narrow', novalidate: true, 'aria-label': 'Sign in with an API key'},
    h('h2', {text: 'Or with an API key'}),
    h('p', {class: 'muted', text: 'The key starts a session in this browser and is not kept: no key or password is stored in the page.'}),
    formAlert(),
    field('API key', input, {name: 'key', hint: 'Made with: inkwell key create --user NAME'}),
    h('div', {class: 'actions'}, keySubmit));
  root.append(form, keyForm);
  // single sign-on (API.md §21): "Sign in with <issuer>" when the server has one
  fetch('/auth/oidc', {credentials: 'same-origin'}).then((r) => r.ok ? r.json() : null).then((j) => {
    if (!j || !j.data || form.querySelector('.sso')) return;
    const link = h('a', {class: 'btn', href: j.data.login_url, text: `Sign in with ${j.data.name}`});
    form.append(h('div', {class: 'actions sso'}, link));
  }).catch(() => {});
  if (signinNotice) {
    const a = form.querySelector('.form-alert');
    a.textContent = signinNotice;
    a.hidden = false;
    signinNotice = '';
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const errs = {};
    if (!name.value.trim()) errs.name = ['Enter your name.'];
    if (!password.value) errs.password = ['Enter your password.'];
    if (Object.keys(errs).length) return showErrors(form, {fields: errs});
    submit.disabled = true;
    try {
      await signIn({name: name.value.trim(), password: password.value});
      password.value = '';
      forgetTemplates();
      const {role} = await keyRole();
      afterSignin(route, role);
    } catch (err) {
      showErrors(form, err.status === 401 ? {fields: {password: ['The name or the password is wrong.']}} : err);
    } finally { submit.disabled = false; }
  });
  keyForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return showErrors(keyForm, {fields: {key: ['Enter your API key.']}});
    keySubmit.disabled = true;
    try {
      await signIn({key});
      input.value = '';
      forgetTemplates();
      const {role} = await keyRole();
      afterSignin(route, role);
    } catch (err) {
      showErrors(keyForm, err.status === 401 ? {fields: {key: ['This key was not accepted: it is wrong or has been revoked.']}} : err);
    } finally { keySubmit.disabled = false; }
  });
  return {};
}

events.addEventListener('unauthenticated', (e) => {
  setGuard(null);
  forgetTemplates();
  // the sign-in form says it itself; several calls refused at once (the page's and the
  // usage meter's) lead there once
  if (current?.name === 'signin' || parseHash().path.startsWith('/signin')) return;
  signinNotice = e.detail;
  navigate('#/signin?next=' + encodeURIComponent(location.hash));
});

document.getElementById('signout').addEventListener('click', async () => {
  const msg = guardMessage();
  if (msg && !await confirmDialog('Sign out and leave this page?', msg, 'Sign out')) return;
  setGuard(null);
  await signOut();
  forgetTemplates();
  toast('Signed out.');
  navigate('#/signin');
});

window.addEventListener('beforeunload', (e) => { if (guardMessage()) { e.preventDefault(); e.returnValue = ''; } });
installKeys();
window.addEventListener('hashchange', render);
window.addEventListener('inkwell:route', render);
render();
