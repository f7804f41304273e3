"""The Jupyter server extension: a hub in the Jupyter server, and its routes.

Enabled on install by ``etc/jupyter/jupyter_server_config.d/pmux_widget.json``
(``{"ServerApp": {"jpserver_extensions": {"pmux_widget.jupyter": true}}}``); configured by
``c.PmuxWidget.hub`` (``PMUX_WIDGET_SERVER_HUB=0`` also turns the hub off). See
:mod:`.app` (the extension), :mod:`.service` (the hub on its own thread), :mod:`.stream`
(the widget's feed over a websocket), :mod:`.handlers` (the routes).

Kept light: the server imports this module to list and load extensions; what the extension
needs is imported when it loads.
"""

from __future__ import annotations

from typing import Any

__all__ = ["_jupyter_server_extension_points"]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .app import PmuxWidget

    return [{"module": "pmux_widget.jupyter", "app": PmuxWidget}]
