// The function that watches a page around one action (a click, typing, a key), so the driver
// waits for what the action started instead of sleeping a fixed time. Evaluated in the page's
// main world just before the input (the timers, frames and requests the page's own handlers
// start can only be seen there) as `(kSettleScript)(boundMs)`; it returns an object kept as a
// CDP remote object, never stored where the page could find it:
//   settle(quietMs) -> called once the input was answered (its handlers have run); a promise
//                      of {settled, mutations, waited}: it resolves once no timer (due within
//                      the bound) or animation frame the page set since the watch began is
//                      pending, no fetch or XMLHttpRequest it started is in flight, one flush (a
//                      posted message and a zero timer) has run, and nothing happened for quietMs
//                      since settle was called (what the handlers did at once is not waited on);
//                      or when the bound since the watch began is reached (settled: false).
//   restore()          puts the page's functions back (settle does it too).
// Only for the watch's lifetime are window.setTimeout, clearTimeout, requestAnimationFrame,
// cancelAnimationFrame, fetch, Response's body readers and XMLHttpRequest.prototype.send
// wrappers: a page that kept its own reference to them from before is not seen through them
// (the quiet period and the driver's navigation events still are), nor is a timer set by a
// watched timer's callback or a frame requested by a watched frame's (a polling loop or an
// animation would never end). A page can lie to all of this; the bound caps what that costs.
// Thread-safety: constant data.
#pragma once

#include <string_view>

namespace talaria::browser {

inline constexpr std::string_view kSettleScript = R"js((bound) => {
const w = window, perf = performance, now = () => perf.now();
const nativeSet = w.setTimeout, nativeClear = w.clearTimeout, Channel = w.MessageChannel;
const start = now(), until = start + bound;
const SLACK = 100;  // a throttled timer or frame may run this much late before it is given up
const pending = new Map();  // "t12" / "a3" -> when to stop waiting for it
let last = start, requests = 0, mutations = 0, wake = null;
// A timer set inside a watched timer's callback (a polling loop), or a frame requested inside a
// watched frame (an animation), is not waited for: a loop never ends.
let inTimer = false, inFrame = false;
const poke = () => { if (wake) wake(); };
const activity = () => { last = now(); poke(); };
const observer = new MutationObserver((records) => { mutations += records.length; activity(); });
observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
const hooks = [];  // [object, name, wrapper, original]
const put = (obj, name, make) => {
  try {
    const original = obj[name];
    if (typeof original !== 'function') return;
    const wrapper = make(original);
    obj[name] = wrapper;
    if (obj[name] === wrapper) hooks.push([obj, name, wrapper, original]);
  } catch (e) {}
};
put(w, 'setTimeout', (original) => function setTimeout(handler, delay, ...rest) {
  const ms = Math.max(0, Number(delay) || 0);
  if (typeof handler !== 'function' || inTimer || now() + ms > until) {
    return original.call(w, handler, delay, ...rest);
  }
  let id = 0;
  id = original.call(w, function () {
    pending.delete('t' + id);
    inTimer = true;
    try { return handler.apply(this, arguments); } finally { inTimer = false; activity(); }
  }, delay, ...rest);
  pending.set('t' + id, now() + ms + SLACK);
  return id;
});
put(w, 'clearTimeout', (original) => function clearTimeout(id) {
  if (pending.delete('t' + id)) poke();
  return original.call(w, id);
});
put(w, 'requestAnimationFrame', (original) => function requestAnimationFrame(callback) {
  if (typeof callback !== 'function' || inFrame) return original.call(w, callback);
  let id = 0;
  id = original.call(w, function (t) {
    pending.delete('a' + id);
    inFrame = true;
    try { return callback.call(this, t); } finally { inFrame = false; activity(); }
  });
  pending.set('a' + id, now() + 16 + SLACK);
  return id;
});
put(w, 'cancelAnimationFrame', (original) => function cancelAnimationFrame(id) {
  if (pending.delete('a' + id)) poke();
  return original.call(w, id);
});
// A request, or the reading of its answer's body, is pending until its promise settles.
const counted = (original) => function (...args) {
  const p = original.apply(this, args);
  requests++;
  const done = () => { requests--; activity(); };
  p.then(done, done);
  return p;
};
put(w, 'fetch', counted);
if (w.Response) {
  for (const m of ['text', 'json', 'arrayBuffer', 'blob', 'formData']) put(w.Response.prototype, m, counted);
}
if (w.XMLHttpRequest) put(w.XMLHttpRequest.prototype, 'send', (original) => function send(...args) {
  // Counted before the call: a synchronous request ends (loadend) inside it.
  let counted = true;
  requests++;
  const end = () => { if (counted) { counted = false; requests--; activity(); } };
  this.addEventListener('loadend', end, {once: true});
  try { return original.apply(this, args); } catch (e) { end(); throw e; }
});
const restore = () => {
  wake = null;
  observer.disconnect();
  for (const [obj, name, wrapper, original] of hooks) {
    try { if (obj[name] === wrapper) obj[name] = original; } catch (e) {}
  }
  hooks.length = 0;
};
const settle = (quiet) => new Promise((resolve) => {
  // Called once the input was answered, i.e. after its handlers ran: what they changed at once
  // is done and needs no quiet period; what they left pending is waited for below, and so is
  // untracked work queued right behind them, which one flush shows: a posted message and a zero
  // timer, each queued after the messages and timers the handlers queued the same way. Only
  // activity after that (a tracked timer firing, a request ending) asks for quietMs of quiet.
  last = -Infinity;
  let flushing = 2, timer = 0;
  const flushed = () => { if (--flushing === 0) check(); };
  const check = () => {
    nativeClear.call(w, timer);
    const t = now();
    for (const [key, stop] of pending) if (t > stop) pending.delete(key);
    const idle = pending.size === 0 && requests === 0 && flushing === 0;
    const settled = idle && t - last >= quiet;
    if (settled || t >= until) {
      restore();
      resolve({settled, mutations, waited: Math.round(t - start)});
      return;
    }
    let next = until;
    if (idle) next = Math.min(next, last + quiet);
    for (const stop of pending.values()) next = Math.min(next, stop);
    timer = nativeSet.call(w, check, Math.max(1, next - t));
  };
  wake = check;
  try {
    const channel = new Channel();
    channel.port1.onmessage = () => { channel.port1.close(); flushed(); };
    channel.port2.postMessage(0);
  } catch (e) { flushed(); }
  nativeSet.call(w, flushed, 0);
  check();
});
return {settle, restore};
})js";

}  // namespace talaria::browser
