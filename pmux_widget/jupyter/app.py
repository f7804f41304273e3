"""``PmuxWidget``: the server extension app (config class ``c.PmuxWidget``).

At load it only reads its config, adds its routes and starts a thread that starts the hub:
the server answers at once, and a hub that is slow to start (a big store, a stuck file) or
fails to makes the routes answer 503 with the reason, never a server that does not start.
"""

from __future__ import annotations

import asyncio
import os

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Float

from .service import SERVICE_KEY, ServerHub
from .terminals import TERMINALS_KEY, Terminals

__all__ = ["ENV_SWITCH", "PmuxWidget", "hub_wanted"]

#: ``PMUX_WIDGET_SERVER_HUB=0`` (or false, no, off) turns the server's hub off.
ENV_SWITCH = "PMUX_WIDGET_SERVER_HUB"


def hub_wanted(configured: bool, environ: dict[str, str] | None = None) -> bool:
    """The config's ``hub`` unless the environment turns it off."""
    value = (environ if environ is not None else os.environ).get(ENV_SWITCH, "")
    return configured and value.strip().lower() not in ("0", "false", "no", "off")


class PmuxWidget(ExtensionApp):
    """pmux-widget in the Jupyter server: a hub of its own, and the ``pmux/api`` routes."""

    name = "pmux_widget"
    description = "Live status of Claude Code sessions: a hub and routes in the Jupyter server"
    load_other_extensions = True

    hub = Bool(
        True,
        help=(
            "Run a pmux-widget hub in the Jupyter server (on its own thread), which the "
            "side panel and the status bar show. PMUX_WIDGET_SERVER_HUB=0 also turns it off."
        ),
    ).tag(config=True)

    call_timeout = Float(
        5.0,
        help="Seconds a route waits for the hub's thread before answering 503.",
    ).tag(config=True)

    def initialize_settings(self) -> None:
        from .push import page_url

        server = self.serverapp
        page = page_url(server.base_url, server.default_url) if server is not None else "/lab"
        service = ServerHub(
            enabled=hub_wanted(bool(self.hub)),
            call_timeout=float(self.call_timeout),
            log=self.log,
            page=page,
        )
        self.service = service
        self.settings[SERVICE_KEY] = service
        service.start()
        # the server's terminals (issue 21): watched on this loop, the rest on our threads
        serverapp = self.serverapp
        assert serverapp is not None  # an extension's settings are made by its server
        terminals = Terminals(
            serverapp.web_app.settings,
            hub_port=lambda: service.hub.port if service.hub is not None else None,
            url=serverapp.connection_url,
            log=self.log,
        )
        self.terminals = terminals
        self.settings[TERMINALS_KEY] = terminals
        terminals.start()
        # the kernels' notebooks: an Agent SDK run from a cell names its notebook (issue 35)
        from .kernels import KernelNotebooks

        self.kernel_notebooks = KernelNotebooks(
            serverapp.web_app.settings, serverapp.connection_url, self.log
        )
        self.kernel_notebooks.start()

    def initialize_handlers(self) -> None:
        from . import push
        from .attach_terminal import AttachHandler
        from .handlers import TEST_ROUTES, routes
        from .new_session import (
            ForgetScreenHandler,
            NewSessionHandler,
            ScreenHandler,
            TerminalsHandler,
        )

        self.handlers.extend(routes() + push.routes())
        self.handlers.append((r"pmux/api/sessions/new", NewSessionHandler))
        self.handlers.append((r"pmux/api/sessions/attach", AttachHandler))
        self.handlers.append((r"pmux/api/terminals", TerminalsHandler))
        if os.environ.get(TEST_ROUTES) == "1":
            self.handlers.append((r"pmux/api/test/forget-screen", ForgetScreenHandler))
            self.handlers.append((r"pmux/api/test/screen", ScreenHandler))

    async def stop_extension(self) -> None:
        notebooks = getattr(self, "kernel_notebooks", None)
        if notebooks is not None:
            notebooks.stop()
        terminals: Terminals | None = getattr(self, "terminals", None)
        if terminals is not None:
            terminals.stop()
        service: ServerHub | None = getattr(self, "service", None)
        if service is not None:
            # hub.stop() joins its thread (up to seconds): not on the server's loop
            await asyncio.get_running_loop().run_in_executor(None, service.stop)
