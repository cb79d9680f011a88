/**
 * A "Portal" menu in JupyterLab's menu bar: the hub's session cards, the jobs page, this
 * session's TensorBoard page, VS Code and the desktop, and the REST API docs, each in a tab of
 * its own. The menu itself is declared in schema/portal-menu.json (JupyterLab builds menus from
 * plugin settings). VS Code and the desktop show only where this session's environment has them:
 * jupyter-server-proxy lists the servers it offers.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

// Command id, label, and where it goes from the hub's base URL ("/") or this server's ("/user/x/").
const ENTRIES: Array<[string, string, (base: string, server: string) => string]> = [
  ['gpuportal:open-sessions', 'Sessions', base => `${base}hub/home`],
  ['gpuportal:open-jobs', 'Jobs', base => `${base}services/portal/jobs`],
  ['gpuportal:open-tensorboard-page', 'TensorBoard', (_base, server) => `${server}tensorboard/`],
  ['gpuportal:open-vscode', 'VS Code', (_base, server) => `${server}vscode/`],
  ['gpuportal:open-desktop', 'Desktop', (_base, server) => `${server}desktop/`],
  ['gpuportal:open-api-docs', 'API', base => `${base}services/portal/docs`]
];

// Entries that need a jupyter-server-proxy server of this name in the session.
const NEEDS_SERVER: Record<string, string> = {
  'gpuportal:open-vscode': 'vscode',
  'gpuportal:open-desktop': 'desktop-websockify'
};

/** The names of the servers jupyter-server-proxy offers in this session (none if it cannot say). */
async function offeredServers(): Promise<Set<string>> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'server-proxy/servers-info');
  try {
    const response = await ServerConnection.makeRequest(url, {}, settings);
    if (!response.ok) {
      return new Set();
    }
    const info = (await response.json()) as { server_processes?: Array<{ name: string }> };
    return new Set((info.server_processes ?? []).map(server => server.name));
  } catch {
    return new Set();
  }
}

export const portalMenuPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:portal-menu',
  description: 'A Portal menu: sessions, jobs, TensorBoard, VS Code, the desktop and the API, in new tabs.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    const hubPrefix = PageConfig.getOption('hubPrefix');
    if (!hubPrefix) {
      return; // not started by a hub
    }
    const base = hubPrefix.replace(/hub\/$/, '');
    const server = URLExt.join(PageConfig.getBaseUrl(), '/');
    let offered = new Set<string>();
    for (const [id, label, where] of ENTRIES) {
      app.commands.addCommand(id, {
        label,
        caption: `Open ${label} in a new tab`,
        isVisible: () => !(id in NEEDS_SERVER) || offered.has(NEEDS_SERVER[id]),
        execute: () => {
          window.open(where(base, server), '_blank', 'noopener');
        }
      });
    }
    void offeredServers().then(names => {
      offered = names;
      for (const id of Object.keys(NEEDS_SERVER)) {
        app.commands.notifyCommandChanged(id);
      }
    });
  }
};
