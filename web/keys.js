// keys.js — the app's keyboard shortcuts (issue 35): "/" goes to the search field (the
// documents list's, or the page's own), Ctrl/Cmd+Enter sends the form the focus is in
// (Write it, Regenerate, Run, Save). The editor's own (Ctrl/Cmd+S) are in edit.js.
import {navigate} from './nav.js';

const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
const searchField = () => document.querySelector('main input[type=search][name=search], main input[name=search]');

export function installKeys() {
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented) return;
    if (e.key === '/' && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target)) {
      e.preventDefault();
      const f = searchField();
      if (f) { f.focus(); f.select(); return; }
      navigate('#/documents');
      const t0 = performance.now();
      const wait = () => { const g = searchField(); if (g) g.focus(); else if (performance.now() - t0 < 5000) requestAnimationFrame(wait); };
      requestAnimationFrame(wait);
    } else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.altKey) {
      const form = e.target.closest?.('form');
      const submit = form?.querySelector('button[type=submit]:not([disabled])');
      if (!submit) return;
      e.preventDefault();
      form.requestSubmit(submit);
    }
  });
}
