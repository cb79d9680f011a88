/**
 * A "Portal" menu in JupyterLab's menu bar: the hub's session cards, the jobs page, this
 * session's TensorBoard page and the REST API docs, each in a tab of its own. The menu itself
 * is declared in schema/portal-menu.json (JupyterLab builds menus from plugin settings).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';

// Command id, label, and where it goes from the hub's base URL ("/") or this server's ("/user/x/").
const ENTRIES: Array<[string, string, (base: string, server: string) => string]> = [
  ['gpuportal:open-sessions', 'Sessions', base => `${base}hub/home`],
  ['gpuportal:open-jobs', 'Jobs', base => `${base}services/portal/jobs`],
  ['gpuportal:open-tensorboard-page', 'TensorBoard', (_base, server) => `${server}tensorboard/`],
  ['gpuportal:open-api-docs', 'API', base => `${base}services/portal/docs`]
];

export const portalMenuPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:portal-menu',
  description: 'A Portal menu: sessions, jobs, TensorBoard and the API, in new tabs.',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    const hubPrefix = PageConfig.getOption('hubPrefix');
    if (!hubPrefix) {
      return; // not started by a hub
    }
    const base = hubPrefix.replace(/hub\/$/, '');
    const server = URLExt.join(PageConfig.getBaseUrl(), '/');
    for (const [id, label, where] of ENTRIES) {
      app.commands.addCommand(id, {
        label,
        caption: `Open ${label} in a new tab`,
        execute: () => {
          window.open(where(base, server), '_blank', 'noopener');
        }
      });
    }
  }
};
