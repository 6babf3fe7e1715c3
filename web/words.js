// words.js — live counts of a text as the server counts them (API.md: `words` is what
// ICU's word boundaries find, the segments that are words): Intl.Segmenter with word
// granularity is the browser's ICU, so Japanese and Chinese count by their words.
let wordSeg = null, charSeg = null;

export function countWords(text) {
  wordSeg ||= new Intl.Segmenter(undefined, {granularity: 'word'});
  let n = 0;
  for (const s of wordSeg.segment(text || '')) if (s.isWordLike) n++;
  return n;
}

// characters as people see them (grapheme clusters: an emoji with its modifiers is one)
export function countChars(text) {
  charSeg ||= new Intl.Segmenter(undefined, {granularity: 'grapheme'});
  let n = 0;
  for (const _ of charSeg.segment(text || '')) n++; // eslint-disable-line no-unused-vars
  return n;
}

// "1,234 words · 7,001 characters · 6 min read" (230 words a minute, at least 1 once
// there is a word)
export function textStats(text) {
  const w = countWords(text), c = countChars(text);
  const min = w ? Math.max(1, Math.round(w / 230)) : 0;
  const fmt = (n) => n.toLocaleString('en');
  return `${fmt(w)} word${w === 1 ? '' : 's'} · ${fmt(c)} character${c === 1 ? '' : 's'} · ${min} min read`;
}
