/* pmux-widget's service worker, served at {base_url}pmux/sw.js by the Jupyter server
 * extension (pmux_widget/jupyter/push.py); its scope is {base_url}pmux/.
 *
 * push: a message {title, body, session_id, state, host, url, tag[, actions, token]}
 *   (docs/notifications.md) becomes the session's notification (tagged with the session
 *   id), so a newer state replaces the older one; state "answered" closes it instead. Reads
 *   and shows run one at a time (see serially).
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

// The worker's notification work runs one step at a time. Chromium's getNotifications()
// syncs its store with what the platform displays: one that runs while a showNotification is
// under way drops the new notification from the store as "not displayed" (still on screen,
// never listed again, so never closed or replaced by its tag later). Push events are not
// serialised by the browser (a dialog's push and its answer's can overlap), so this worker's
// own reads and shows queue here. Measured with a page polling getNotifications() every 20 ms
// (tests/browser): 6 of 150 show/close cycles lost; 0 of 150 when no read overlapped a show.
let queue = Promise.resolve();

function serially(step) {
  const done = queue.then(step, step);
  queue = done.catch(() => undefined);
  return done;
}

/** The session's shown notifications (the tag is the session's: data.tag says it too). */
async function shownFor(tag) {
  const all = await self.registration.getNotifications();
  return all.filter((n) => ((n.data && n.data.tag) || n.tag) === tag);
}

async function show(msg) {
  const tag = String(msg.tag || msg.session_id || 'pmux');
  if (msg.state === 'answered') {
    for (const n of await shownFor(tag)) n.close();
    return;
  }
  const options = {
    body: String(msg.body || ''),
    tag,
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
  if (msg) event.waitUntil(serially(() => show(msg)));
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
    notification.close();
    return;
  }
  // The server also pushes "Not answered" for a refusal; this one says it at once, and also
  // when the server could not be reached. Nothing was typed. It replaces the notification
  // through its tag, with no close() first: a replaced notification stays displayed (the
  // platform already shows its id), where a closed then shown one is new to the platform and
  // the race of getNotifications() described at serially() could take it.
  await serially(() => self.registration.showNotification('Not answered', {
    body: reason,
    tag: notification.tag,
    renotify: false,
    data: { ...data, token: '' },
  }));
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
  notification.close();
  event.waitUntil(focusOrOpen(data));
});
