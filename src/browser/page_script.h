// The one function talaria injects into a page's isolated world (a JS world of its own that
// shares the DOM but not the page's globals, so a page cannot tamper with it). It installs
// `globalThis.__talaria` with:
//   snapshot({full, scope, scanned}) -> {text, count, url, title, frames} or {error}, or
//                               {scan: true} when the document changed since closed shadow roots
//                               were last looked for and `scanned` is not set
//   point(ref)               -> {x, y} in this frame's viewport pixels (scrolled into view;
//                               same-origin frame offsets added) or {error}
//   origin(ref)              -> {x, y}: where an iframe's content starts, in the same pixels
//   element(ref)             -> the element itself (for DOM.describeNode) or null
//   adopt(shadowRoot)        -> walk this (closed) shadow root under its host from now on
//   focusClear(ref)          -> {ok} or {error}: focuses a field and clears its value
//   images()                 -> [{src, alt, width, height}] (data: URLs dropped)
//   labels(on, prefix)       -> draws/removes ref labels for an annotated screenshot ("[5]" for
//                               e5; with prefix "f2", "[f2e5]"), same-origin frames' included
//   scroll(dy)               -> the new scrollY
// Refs live in this world's globals, so they are stable across snapshots of one document and
// start again at e1 on the next document (a new world). Elements of same-origin iframes and
// open shadow roots are walked in place; a cross-origin iframe leaves a `- frame [frame=eN]`
// line (its ref in `frames`) where the driver splices that frame's own snapshot. Closed shadow
// roots are invisible to scripts: the driver finds them over CDP and hands them to adopt().
// Thread-safety: constant data.
#pragma once

#include <string_view>

namespace talaria::browser {

inline constexpr std::string_view kPageScript = R"js((() => {
if (globalThis.__talaria) return;
const refs = new Map();        // "eN" -> element
const ids = new WeakMap();     // element -> "eN"
let next = 1;
const closedRoots = new WeakMap();  // host -> its closed shadow root, from adopt()
// Any change to the DOM may have attached closed shadow roots: the next snapshot asks the driver
// to look again. (Changes inside adopted roots are observed too.)
let dirty = true;
const observer = new MutationObserver(() => { dirty = true; });
observer.observe(document, {childList: true, subtree: true});
// Same-origin frames' documents are walked in place: watched too once seen.
const watched = new WeakSet([document]);
function watch(doc) {
  if (watched.has(doc)) return;
  watched.add(doc);
  observer.observe(doc, {childList: true, subtree: true});
  dirty = true;
}
function sameOriginDocument(frame) {
  try { return frame.contentDocument; } catch (e) { return null; }
}
// Whether some element may hide a closed shadow root, so the driver's pierce (which costs about
// three snapshots on a big page) is paid only then: a custom element without an open root, or a
// host-capable element with no children that still takes space (its content is a shadow's).
const HOSTS = new Set(['ARTICLE','ASIDE','BLOCKQUOTE','BODY','DIV','FOOTER','H1','H2','H3','H4',
  'H5','H6','HEADER','MAIN','NAV','P','SECTION','SPAN']);
function mayHideClosedRoot(root) {
  for (const el of root.querySelectorAll('*')) {
    const sr = el.shadowRoot || closedRoots.get(el);
    if (sr) { if (mayHideClosedRoot(sr)) return true; continue; }
    if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
      const d = sameOriginDocument(el);
      if (d) { watch(d); if (mayHideClosedRoot(d)) return true; }
      continue;
    }
    if (el.localName.includes('-')) return true;
    if (HOSTS.has(el.tagName) && !el.firstChild) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) return true;
    }
  }
  return false;
}
function adopt(root) {
  if (!root || !root.host || closedRoots.get(root.host) === root) return false;
  closedRoots.set(root.host, root);
  observer.observe(root, {childList: true, subtree: true});
  return true;
}
const refOf = (el) => {
  let r = ids.get(el);
  if (!r) { r = 'e' + next++; ids.set(el, r); refs.set(r, el); }
  return r;
};
const INTERACTIVE = new Set(['button','link','textbox','searchbox','checkbox','radio','combobox',
  'listbox','option','menuitem','menuitemcheckbox','menuitemradio','slider','spinbutton','switch',
  'tab','treeitem','iframe']);
const KEEP = new Set(['heading','navigation','main','form','list','listitem','table','row','cell',
  'columnheader','dialog','alertdialog','img','region','banner','contentinfo','complementary',
  'alert','status','group','article','tablist','menu','menubar','tree','grid']);
const SKIP_TAGS = new Set(['SCRIPT','STYLE','NOSCRIPT','TEMPLATE','HEAD','META','LINK','SVG']);
const clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; };
const q = (s) => JSON.stringify(s);
function roleOf(el) {
  const explicit = el.getAttribute('role');
  if (explicit) return explicit.split(/\s+/)[0].toLowerCase();
  const t = el.tagName;
  switch (t) {
    case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : '';
    case 'BUTTON': case 'SUMMARY': return 'button';
    case 'INPUT': {
      const ty = (el.getAttribute('type') || 'text').toLowerCase();
      if (ty === 'hidden') return 'hidden';
      if (ty === 'checkbox') return 'checkbox';
      if (ty === 'radio') return 'radio';
      if (ty === 'range') return 'slider';
      if (ty === 'number') return 'spinbutton';
      if (ty === 'search') return 'searchbox';
      if (['submit','button','reset','image'].includes(ty)) return 'button';
      return 'textbox';
    }
    case 'TEXTAREA': return 'textbox';
    case 'SELECT': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
    case 'OPTION': return 'option';
    case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
    case 'IMG': return el.getAttribute('alt') ? 'img' : '';
    case 'NAV': return 'navigation';
    case 'MAIN': return 'main';
    case 'FORM': return 'form';
    case 'UL': case 'OL': return 'list';
    case 'LI': return 'listitem';
    case 'TABLE': return 'table';
    case 'TR': return 'row';
    case 'TD': return 'cell';
    case 'TH': return 'columnheader';
    case 'DIALOG': return 'dialog';
    case 'IFRAME': case 'FRAME': return 'iframe';
  }
  if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
  if (el.hasAttribute('onclick') || (el.tabIndex >= 0 && el.hasAttribute('tabindex'))) return 'generic-clickable';
  return '';
}
function textOf(el) { return el.innerText !== undefined ? el.innerText : el.textContent; }
function nameOf(el, role) {
  const label = el.getAttribute('aria-label');
  if (label) return clip(label, 100);
  const by = el.getAttribute('aria-labelledby');
  if (by) {
    const d = el.ownerDocument;
    const s = by.split(/\s+/).map((id) => { const n = d.getElementById(id); return n ? textOf(n) : ''; }).join(' ');
    if (s.trim()) return clip(s, 100);
  }
  const t = el.tagName;
  if (t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT') {
    if (el.labels && el.labels.length) return clip(textOf(el.labels[0]), 100);
    const ty = (el.getAttribute('type') || '').toLowerCase();
    if (['submit','button','reset'].includes(ty)) return clip(el.value, 100);
    return clip(el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || '', 100);
  }
  if (t === 'IMG') return clip(el.getAttribute('alt'), 100);
  if (t === 'IFRAME') return clip(el.getAttribute('title') || el.getAttribute('name') || '', 100);
  if (role === 'link' || role === 'button' || role === 'heading' || role === 'option' ||
      role === 'tab' || role === 'menuitem' || role === 'generic-clickable' || role === 'cell' ||
      role === 'columnheader' || role === 'listitem' && el.children.length === 0) {
    return clip(textOf(el), 100) || clip(el.getAttribute('title'), 100);
  }
  return clip(el.getAttribute('title'), 100);
}
function hidden(el) {
  if (el.hidden || el.getAttribute('aria-hidden') === 'true') return true;
  if (el.checkVisibility) return !el.checkVisibility({visibilityProperty: true});
  const s = el.ownerDocument.defaultView.getComputedStyle(el);
  return s.display === 'none' || s.visibility === 'hidden';
}
function states(el, role) {
  const out = [];
  if (role === 'heading') out.push('level=' + (/^H[1-6]$/.test(el.tagName) ? el.tagName[1] : (el.getAttribute('aria-level') || '2')));
  if (role === 'checkbox' || role === 'radio' || role === 'switch') {
    const c = el.getAttribute('aria-checked');
    if (el.checked || c === 'true') out.push('checked');
  }
  if (el.disabled || el.getAttribute('aria-disabled') === 'true') out.push('disabled');
  const ex = el.getAttribute('aria-expanded');
  if (ex !== null) out.push(ex === 'true' ? 'expanded' : 'collapsed');
  if (el.required) out.push('required');
  if (role === 'option' && (el.selected || el.getAttribute('aria-selected') === 'true')) out.push('selected');
  if (el === el.ownerDocument.activeElement && role !== 'iframe') out.push('focused');
  return out;
}
function valueOf(el, role) {
  if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'slider') {
    if (el.isContentEditable) return clip(textOf(el), 200);
    if ((el.getAttribute('type') || '').toLowerCase() === 'password') return el.value ? '••••' : '';
    return clip(el.value, 200);
  }
  if (role === 'combobox' && el.tagName === 'SELECT') {
    const o = el.options[el.selectedIndex];
    return o ? clip(o.text, 100) : '';
  }
  return '';
}
function childrenOf(node) {
  const sr = node.shadowRoot || closedRoots.get(node);
  if (sr) return Array.from(sr.childNodes);
  if (node.tagName === 'SLOT') {
    const a = node.assignedNodes({flatten: true});
    if (a.length) return a;
  }
  if (node.tagName === 'IFRAME' || node.tagName === 'FRAME') {
    const d = sameOriginDocument(node);
    if (d) watch(d);
    return d && d.body ? [d.body] : [];
  }
  return Array.from(node.childNodes);
}
function snapshot(opts) {
  opts = opts || {};
  if (dirty && !opts.scanned) {
    dirty = false;
    if (mayHideClosedRoot(document)) return {scan: true};
  }
  dirty = false;
  let root = document.body || document.documentElement;
  if (opts.scope) {
    if (/^@?e\d+$/.test(opts.scope)) root = refs.get(opts.scope.replace('@', ''));
    else { try { root = document.querySelector(opts.scope); } catch (e) { return {error: 'invalid selector: ' + opts.scope}; } }
    if (!root || !root.isConnected) return {error: 'scope not found: ' + opts.scope};
  }
  const full = !!opts.full;
  const lines = [];
  let count = 0;
  const frames = [];
  const walk = (node, depth) => {
    if (node.nodeType === 3) {
      const t = clip(node.nodeValue, 200);
      if (t) lines.push('  '.repeat(depth) + '- text: ' + t);
      return;
    }
    if (node.nodeType !== 1 || SKIP_TAGS.has(node.tagName.toUpperCase())) return;
    const el = node;
    if (hidden(el)) return;
    let role = roleOf(el);
    if (role === 'hidden' || role === 'none' || role === 'presentation') {
      if (role === 'hidden') return;
      role = '';
    }
    const interactive = INTERACTIVE.has(role) || role === 'generic-clickable';
    if (role && !interactive && !KEEP.has(role) && !full) role = '';
    if (role || full) {
      const shown = role === 'generic-clickable' ? 'clickable' : (role || el.tagName.toLowerCase());
      const name = role ? nameOf(el, role) : '';
      let line = '  '.repeat(depth) + '- ' + shown;
      if (name) line += ' ' + q(name);
      const st = states(el, role);
      for (const s of st) line += ' [' + s + ']';
      if (interactive || role === 'heading') { line += ' [ref=' + refOf(el) + ']'; count++; }
      if (role === 'link' && el.href && full) line += ' [url=' + el.href + ']';
      const v = valueOf(el, role);
      if (v) line += ': ' + v;
      lines.push(line);
      // A named leaf control says everything its text would.
      if (interactive && role !== 'iframe' && (name || el.children.length === 0)) return;
      if (role === 'heading') return;
      if (role === 'iframe') {
        const kids = childrenOf(el);
        if (!kids.length) {
          const r = refOf(el);
          frames.push(r);
          lines.push('  '.repeat(depth + 1) + '- frame [frame=' + r + ']');
          return;
        }
      }
      for (const c of childrenOf(el)) walk(c, depth + 1);
      return;
    }
    for (const c of childrenOf(el)) walk(c, depth);
  };
  walk(root, 0);
  if (!full) {
    // Compact: drop structure lines with nothing under them.
    const kept = [];
    const indent = (s) => s.length - s.trimStart().length;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      const structural = !l.includes('[ref=') && !l.includes('- text:') && !l.includes(': ') && !/"/.test(l) &&
        !l.includes('[frame=');
      if (structural && !(i + 1 < lines.length && indent(lines[i + 1]) > indent(l))) continue;
      kept.push(l);
    }
    lines.length = 0;
    lines.push(...kept);
  }
  return {text: lines.join('\n'), count, url: location.href, title: document.title, frames};
}
function element(ref) {
  const el = refs.get(String(ref).replace('@', ''));
  if (!el) return {error: 'unknown ref @' + ref + ' (take a new snapshot: refs belong to the page they came from)'};
  if (!el.isConnected) return {error: 'ref @' + ref + ' is no longer on the page (take a new snapshot)'};
  return {el};
}
function point(ref) {
  const {el, error} = element(ref);
  if (error) return {error};
  el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return {error: 'ref @' + ref + ' has no size on screen (hidden?)'};
  let x = r.left + r.width / 2, y = r.top + r.height / 2;
  let win = el.ownerDocument.defaultView;
  while (win && win.frameElement) {
    const fe = win.frameElement, fr = fe.getBoundingClientRect();
    x += fr.left + fe.clientLeft; y += fr.top + fe.clientTop;
    win = fe.ownerDocument.defaultView;
  }
  return {x, y};
}
function origin(ref) {
  const {el, error} = element(ref);
  if (error) return {error};
  el.scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'});
  const r = el.getBoundingClientRect(), s = el.ownerDocument.defaultView.getComputedStyle(el);
  let x = r.left + el.clientLeft + parseFloat(s.paddingLeft || '0');
  let y = r.top + el.clientTop + parseFloat(s.paddingTop || '0');
  let win = el.ownerDocument.defaultView;
  while (win && win.frameElement) {
    const fe = win.frameElement, fr = fe.getBoundingClientRect();
    x += fr.left + fe.clientLeft; y += fr.top + fe.clientTop;
    win = fe.ownerDocument.defaultView;
  }
  return {x, y};
}
function focusClear(ref) {
  const {el, error} = element(ref);
  if (error) return {error};
  el.scrollIntoView({block: 'center', behavior: 'instant'});
  el.focus();
  if (el.isContentEditable) {
    const s = el.ownerDocument.getSelection(), rg = el.ownerDocument.createRange();
    rg.selectNodeContents(el); s.removeAllRanges(); s.addRange(rg);
    return {ok: true};
  }
  if (!('value' in el)) return {error: 'ref @' + ref + ' is not a text field'};
  el.value = '';
  el.dispatchEvent(new Event('input', {bubbles: true}));
  return {ok: true};
}
function images() {
  return Array.from(document.images).map((i) => ({src: i.currentSrc || i.src, alt: i.alt || '',
    width: i.naturalWidth, height: i.naturalHeight})).filter((i) => i.src && !i.src.startsWith('data:'));
}
// One overlay per document: a same-origin frame's elements are labelled inside that frame
// (fixed to its own viewport, so where the frame shows them).
let overlays = [];
function labels(on, prefix) {
  for (const o of overlays) o.remove();
  overlays = [];
  if (!on) return 0;
  const byDoc = new Map();
  let n = 0;
  for (const [r, el] of refs) {
    if (!el.isConnected) continue;
    const doc = el.ownerDocument, win = doc.defaultView;
    if (!win) continue;
    const b = el.getBoundingClientRect();
    if (b.width === 0 || b.bottom < 0 || b.top > win.innerHeight) continue;
    let overlay = byDoc.get(doc);
    if (!overlay) {
      overlay = doc.createElement('div');
      overlay.style.cssText = 'position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
      byDoc.set(doc, overlay);
    }
    const l = doc.createElement('div');
    // "[5]" names @e5; in a frame the driver entered, "[f2e5]" names @f2e5.
    l.textContent = '[' + (prefix ? prefix + r : r.slice(1)) + ']';
    l.style.cssText = 'position:fixed;font:bold 11px monospace;background:#ff0;color:#000;border:1px solid #c00;padding:0 2px;left:' +
      Math.max(0, b.left) + 'px;top:' + Math.max(0, b.top - 12) + 'px';
    overlay.appendChild(l);
    n++;
  }
  for (const [doc, overlay] of byDoc) {
    (doc.body || doc.documentElement).appendChild(overlay);
    overlays.push(overlay);
  }
  return n;
}
function scroll(dy) { window.scrollBy({top: dy, behavior: 'instant'}); return window.scrollY; }
const elementOf = (ref) => element(ref).el || null;
globalThis.__talaria = {snapshot, point, origin, element: elementOf, adopt, focusClear, images, labels, scroll};
})())js";

}  // namespace talaria::browser
