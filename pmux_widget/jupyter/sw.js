/* pmux-widget's service worker, served at {base_url}pmux/sw.js by the Jupyter server
 * extension (pmux_widget/jupyter/push.py); its scope is {base_url}pmux/.
 *
 * push: a message {title, body, session_id, state, host, url, tag[, actions, token]}
 *   (docs/notifications.md) becomes the session's notification (tagged with the session id,
 *   "#n" added once this worker closed one: see closedTags), so a newer state replaces the
 *   older one; state "answered" closes it instead.
 * notificationclick: Allow once / Deny (a plan's Approve / Keep planning), or a question's
 *   option (its label as "option"), post the token to pmux/api/push/answer (the server
 *   re-checks the dialog before typing; a refusal replaces the notification with why);
 *   a click elsewhere (or Open) focuses an open JupyterLab page of this server and tells it
 *   the session (postMessage {type: "pmux-session", session_id}), or opens the payload's url.
 *
 * Plain script, no imports: the worker is fetched and run by the browser on its own.
 */
/* eslint-env serviceworker */
'use strict';

// {origin}{base_url}: the scope is {base_url}pmux/
const BASE = self.registration.scope.replace(/pmux\/$/, '');

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

function parse(event) {
  if (!event.data) return null;
  try {
    return event.data.json();
  } catch (e) {
    return null;
  }
}

// A notification's tag is never shown again once this worker closed it. Chromium closes by
// the tag's id, and its close lands after close() returns: a new notification with the same
// tag shown a moment later (a session answered, then asking again) could be taken by the
// lagging close, and a getNotifications() then drops it from the store as no longer shown
// (seen once in 50 looped runs of tests/browser/test_push_worker.py, and in the whole browser
// suite). So the session's next notification takes a new tag ("<session>#1", ...); while one
// is shown, a newer state replaces it through its own tag (no close: no race).
const closedTags = new Set();

function close(notification) {
  closedTags.add(notification.tag);
  notification.close();
}

/** The session's shown notifications, whatever tag each took. */
async function shownFor(tag) {
  const all = await self.registration.getNotifications();
  return all.filter((n) => ((n.data && n.data.tag) || n.tag) === tag);
}

async function tagFor(tag) {
  const [shown] = await shownFor(tag);
  if (shown) return shown.tag;
  let fresh = tag;
  for (let n = 1; closedTags.has(fresh); n += 1) fresh = `${tag}#${n}`;
  return fresh;
}

async function show(msg) {
  const tag = String(msg.tag || msg.session_id || 'pmux');
  if (msg.state === 'answered') {
    for (const n of await shownFor(tag)) close(n);
    return;
  }
  const options = {
    body: String(msg.body || ''),
    tag: await tagFor(tag),
    // a newer state of the session alerts again; an "update" (e.g. "already answered")
    // replaces it quietly
    renotify: msg.state !== 'update',
    requireInteraction: msg.state === 'needs-input',
    data: {
      session_id: String(msg.session_id || ''),
      state: String(msg.state || ''),
      url: String(msg.url || BASE + 'lab'),
      token: typeof msg.token === 'string' ? msg.token : '',
      title: String(msg.title || ''),
      // the session's tag (the notification's own may carry a "#n": see closedTags)
      tag,
      choices: {},
    },
  };
  if (Array.isArray(msg.actions) && msg.token) {
    let actions = msg.actions
      .filter((a) => a && typeof a.action === 'string' && typeof a.title === 'string')
    for (const a of actions) {
      if (typeof a.option === 'string') options.data.choices[a.action] = a.option;
    }
    actions = actions.map((a) => ({ action: a.action, title: a.title }));
    // Chromium shows at most Notification.maxActions (2) buttons: then "Open" goes, as a
    // click on the notification itself opens the session anyway; a question's options show
    // all or none (some of them would hide the others: a click opens its row instead)
    const max = (self.Notification && self.Notification.maxActions) || actions.length;
    const choices = Object.keys(options.data.choices).length;
    if (choices > max) actions = [];
    if (actions.length > max) actions = actions.filter((a) => a.action !== 'open');
    options.actions = actions.slice(0, max);
  }
  await self.registration.showNotification(String(msg.title || 'Claude Code'), options);
}

self.addEventListener('push', (event) => {
  const msg = parse(event);
  if (msg) event.waitUntil(show(msg));
});

async function answer(notification, action, option) {
  const data = notification.data || {};
  let endpoint = '';
  try {
    const sub = await self.registration.pushManager.getSubscription();
    endpoint = sub ? sub.endpoint : '';
  } catch (e) {
    endpoint = '';
  }
  let status = 0;
  let reason = 'the server did not answer';
  try {
    // the login cookie goes with it (same origin); the route needs no _xsrf (push.py says why)
    const response = await fetch(BASE + 'pmux/api/push/answer', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: data.token, action, option, endpoint }),
    });
    status = response.status;
    const body = await response.json().catch(() => ({}));
    reason = String(body.reason || body.error || response.statusText || status);
  } catch (e) {
    reason = 'the server is not reachable';
  }
  if (status === 202) {
    close(notification);
    return;
  }
  // The server also pushes "Not answered" for a refusal; this one says it at once, and also
  // when the server could not be reached. Nothing was typed. It replaces the notification
  // through its tag, with no close() first: Chromium closes by the tag's id, and a close then
  // a show let a getNotifications() running between them (the panel's, another worker event's)
  // drop the new one from its store as "no longer displayed" (shown, but never listed again).
  await self.registration.showNotification('Not answered', {
    body: reason,
    tag: notification.tag,
    renotify: false,
    data: { ...data, token: '' },
  });
}

async function focusOrOpen(data) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const page =
    windows.find((c) => c.url.startsWith(BASE) && c.focused) ||
    windows.find((c) => c.url.startsWith(BASE + 'lab')) ||
    windows.find((c) => c.url.startsWith(BASE + 'tree')) ||
    windows.find((c) => c.url.startsWith(BASE) && !c.url.startsWith(BASE + 'pmux/'));
  if (page) {
    page.postMessage({ type: 'pmux-session', session_id: data.session_id || '' });
    try {
      await page.focus();
    } catch (e) {
      // focus() needs a user gesture some browsers do not grant here: the message went anyway
    }
    return;
  }
  if (self.clients.openWindow) await self.clients.openWindow(data.url || BASE + 'lab');
}

self.addEventListener('notificationclick', (event) => {
  const notification = event.notification;
  const data = notification.data || {};
  if ((event.action === 'approve' || event.action === 'deny') && data.token) {
    event.waitUntil(answer(notification, event.action));
    return;
  }
  const choice = (data.choices || {})[event.action];
  if (typeof choice === 'string' && data.token) {
    event.waitUntil(answer(notification, 'answer', choice));
    return;
  }
  close(notification);
  event.waitUntil(focusOrOpen(data));
});
