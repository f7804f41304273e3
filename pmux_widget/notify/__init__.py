"""Notifications when you are away: Web Push to the browsers that asked, and channels
(Apprise URLs: ntfy, Pushover, Telegram, Slack, Discord, Gotify, e-mail, webhooks).

A layer of its own between the hooks and Claude's files: it needs only the core (the rules,
the wording) and this machine (files, clock); the runtime wires it into a hub
(``runtime.assemble.make_hub``), ``hooks.doctor`` reads its health. See docs/notifications.md.
"""
