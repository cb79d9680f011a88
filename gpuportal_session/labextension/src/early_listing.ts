/**
 * The file browser lists its folder as soon as the lab has started, not a second later.
 *
 * JupyterLab 4 restores the default file browser on the router's `routed` signal
 * (filebrowser-extension's restoreBrowser), which comes once every command of the route has
 * finished; one of them, apputils' load-statedb, ends by awaiting the workspace's debounced
 * save, pushed back by each change to the state during the start. Until then the browser
 * carries `jp-mod-restoring`, whose CSS hides the listing: about a second that nothing on
 * screen needs (bench/lab_plugins.py measured it). Here the model's own restore (the folder
 * the workspace remembers, or the home) runs once the lab has started; the model restores only
 * once, so the later call from restoreBrowser finds it done, refreshes the same folder and
 * does not pass through the home on its way (no flicker).
 *
 * A URL that names a file or a folder (/lab/tree/..., ?file-browser-path=) is left to
 * JupyterLab: there the restore must not go to the remembered folder first.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';

// The class restoreBrowser puts on the browser until it is done; its CSS hides the listing.
const RESTORING = 'jp-mod-restoring';

/** Whether the page was opened on a path, which JupyterLab's router then opens. */
function opensAPath(treePath: string, search: string): boolean {
  const query = URLExt.queryStringToObject(search.replace(/^\?/, ''));
  return Boolean(treePath) || Boolean(query['file-browser-path']);
}

export const earlyListingPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:early-listing',
  description: "Lists the file browser's folder as soon as the lab has started.",
  autoStart: true,
  requires: [IDefaultFileBrowser],
  activate: (app: JupyterFrontEnd, browser: IDefaultFileBrowser): void => {
    // Read now: the tree-path updater rewrites treePath once the route is resolved.
    if (opensAPath(PageConfig.getOption('treePath'), window.location.search)) {
      return;
    }
    const list = async (): Promise<void> => {
      await app.started;
      await browser.model.restore(browser.id);
      browser.removeClass(RESTORING);
    };
    // A remembered folder that went away: the model falls back to the home by itself.
    list().catch(() => undefined);
  }
};
