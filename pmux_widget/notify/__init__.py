"""Notifications when you are away: Web Push to the browsers that asked, and channels
(Apprise URLs: ntfy, Pushover, Telegram, Slack, Discord, Gotify, e-mail, webhooks).

A layer of its own between the hooks and Claude's files: it needs only the core (the rules,
the wording) and this machine (files, clock); the runtime wires it into a hub
(``runtime.assemble.make_hub``), ``hooks.doctor`` reads its health. See docs/notifications.md.

What the JupyterLab server extension calls (its hub built with ``make_hub(notify=True)``):

```python
from pmux_widget.notify.notifier import find
n = find(hub)                                   # the hub's Notifier
n.url_for = lambda sid: f"{base}lab?pmux-session={sid}"    # what a click opens
n.public_key()                                  # GET  pmux/api/push/key -> {"public_key"}
n.subscribe(push_subscription_json, device)     # POST pmux/api/push/subscriptions (201)
n.unsubscribe(endpoint)                         # DELETE the same
n.devices()                                     # the panel's list (no keys)
n.report_presence(device, shown_session_ids, visible=..., focused=..., input_at=ms)
n.answers.answer(token, "approve"|"deny"|"answer", host=n.host, device=..., session_of=
    hub.fleet.get, act=runtime.action_request.answer_from(hub, device,
    hub.record_action), now=ms, option=label)   # POST pmux/api/push/answer: .status, .reason
n.update_notification(sid, title, body)         # "already answered" after a refusal
notify.status.overview(home)                    # channels (masked), browsers, health, settings
notify.config.notify_settings(home, **changes)  # the settings (also pmux_widget.notify_settings)
```
"""
