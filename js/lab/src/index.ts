// pmux-widget's JupyterLab extension (Lab and Notebook 7): the side panel with the widget's own
// view over the server extension's stream, the status-bar item (the top bar's in Notebook 7,
// which has no status bar), palette commands and settings.
// The page's one StreamModel feeds them all; the tab title's "(N)" and desktop notifications
// come from the same Link (page-wide singletons, see js/src/title.ts and notify.ts), whatever
// number of widgets the notebooks also show.
import { ILayoutRestorer, type JupyterFrontEnd, type JupyterFrontEndPlugin } from "@jupyterlab/application";
import { ICommandPalette, IToolbarWidgetRegistry } from "@jupyterlab/apputils";
import { ISettingRegistry } from "@jupyterlab/settingregistry";
import { IStatusBar } from "@jupyterlab/statusbar";
import { ITerminalTracker } from "@jupyterlab/terminal";
import { PageConfig } from "@jupyterlab/coreutils";
import { LabIcon } from "@jupyterlab/ui-components";
import { setLabPanel } from "../../src/lab-panel";
import { RANGES, type RangeKey } from "../../src/timeline";
import { addCommands, CATEGORY, CMD } from "./commands";
import { Live, streamSocket } from "./live";
import { PANEL_ID, SessionsPanel } from "./panel";
import { installPush } from "./push";
import { STATUS_ID, StatusItem } from "./status";
import { addOpenTerminal, attachInTerminal, TerminalDots } from "./terminals";
import { addTopBarItem } from "./topbar";

const PLUGIN_ID = "pmux-widget:plugin";

const ICON = new LabIcon({
  name: "pmux-widget:sessions",
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161"><circle cx="6" cy="7" r="3"/><circle cx="6" cy="17" r="3"/>' +
    '<rect x="11" y="5.5" width="10" height="3" rx="1.5"/><rect x="11" y="15.5" width="10" height="3" rx="1.5"/></g></svg>',
});

type Side = "left" | "right";

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: "Claude Code sessions: a side panel, a status-bar (or top-bar) item, palette commands.",
  autoStart: true,
  optional: [IStatusBar, ISettingRegistry, ICommandPalette, ILayoutRestorer, ITerminalTracker, IToolbarWidgetRegistry],
  activate: (
    app: JupyterFrontEnd,
    statusBar: IStatusBar | null,
    settings: ISettingRegistry | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    terminals: ITerminalTracker | null,
    toolbars: IToolbarWidgetRegistry | null,
  ) => {
    const live = new Live(() => streamSocket(app.serviceManager.serverSettings));
    // JupyterLab's terminals (issue 21): the tabs' dots, "Open terminal", "New session"
    const canOpen = terminals !== null && app.serviceManager.terminals.isAvailable();
    const openTerminal = canOpen
      ? (name: string): void => void app.commands.execute("terminal:open", { name })
      : undefined;
    const attachTerminal = openTerminal ? attachInTerminal(app.serviceManager.serverSettings, openTerminal) : undefined;
    const panel = new SessionsPanel(live, {
      openTerminal,
      attachTerminal,
      newSession: {
        settings: app.serviceManager.serverSettings,
        root: PageConfig.getOption("serverRoot"),
        openTerminal: openTerminal ?? (() => undefined),
      },
    });
    if (terminals) new TerminalDots(terminals, live, app.shell);
    panel.title.icon = ICON;
    let side: Side = "right";
    app.shell.add(panel, side, { rank: 600 });
    // the workspace remembers whether the panel was open (and a reload reopens it)
    restorer?.add(panel, PANEL_ID);

    const open = (): void => {
      // Notebook 7 starts its side panels collapsed; activateById expands them there too.
      const shell = app.shell as JupyterFrontEnd.IShell & { expandRight?: () => void; expandLeft?: () => void };
      if (side === "right") shell.expandRight?.();
      else shell.expandLeft?.();
      app.shell.activateById(PANEL_ID);
    };
    // the page's hooks: a notebook's widget opens the panel, or a row's terminal, through them
    // an Agent SDK run's badge opens the notebook whose kernel runs it (issue 35)
    const openNotebook = (path: string): void => void app.commands.execute("docmanager:open", { path });
    setLabPanel({ open, openTerminal, attachTerminal, openNotebook });
    installPush(app.serviceManager.serverSettings, panel, open, app.restored);

    if (statusBar) {
      const item = new StatusItem(live, open);
      statusBar.registerStatusItem(STATUS_ID, { item, align: "left", rank: 50 });
    }
    if (toolbars) addTopBarItem(toolbars, live, open, statusBar !== null);

    addCommands(app.commands, panel, open);
    // "Open terminal" as a command too: {session_id} (issue 21)
    if (canOpen) addOpenTerminal(app, live);
    if (palette) for (const command of Object.values(CMD)) palette.addItem({ command, category: CATEGORY });

    if (settings) {
      const apply = (values: ISettingRegistry.ISettings): void => {
        const wanted = values.get("side").composite === "left" ? "left" : "right";
        if (wanted !== side) {
          side = wanted;
          app.shell.add(panel, side, { rank: 600 });
        }
        live.setNotifications(values.get("notifications").composite !== false);
        const range = values.get("timelineRange").composite;
        if (RANGES.some((r) => r.key === range)) panel.setRange(range as RangeKey);
      };
      void Promise.all([settings.load(PLUGIN_ID), app.restored])
        .then(([values]) => {
          apply(values);
          values.changed.connect(apply);
        })
        .catch((reason: unknown) => console.warn("[pmux-widget] settings not loaded:", reason));
    }
  },
};

export default plugin;
