/**
 * "Open in TensorBoard" on a folder in the file browser's context menu: the session's server
 * (gpuportal_session/tensorboard_api.py) starts a private TensorBoard on it, opened in a tab.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { showErrorMessage } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ServerConnection } from '@jupyterlab/services';

const COMMAND = 'gpuportal:open-tensorboard';

async function openBoard(path: string): Promise<string> {
  const settings = ServerConnection.makeSettings();
  const response = await ServerConnection.makeRequest(
    URLExt.join(settings.baseUrl, 'gpuportal/tensorboard'),
    { method: 'POST', body: JSON.stringify({ path }) },
    settings
  );
  const body = await response.json();
  if (!response.ok) {
    throw new Error(body.message || `The server answered ${response.status}.`);
  }
  return body.url as string;
}

export const tensorboardPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:open-tensorboard',
  description: 'Open in TensorBoard, on a folder of the file browser.',
  autoStart: true,
  requires: [IDefaultFileBrowser],
  activate: (app: JupyterFrontEnd, browser: IDefaultFileBrowser) => {
    const selectedFolder = (): string | null => {
      const item = browser.selectedItems().next();
      return !item.done && item.value.type === 'directory' ? item.value.path : null;
    };
    app.commands.addCommand(COMMAND, {
      label: 'Open in TensorBoard',
      caption: 'TensorBoard on this folder, in a new tab, private to you',
      isVisible: () => selectedFolder() !== null,
      execute: async () => {
        const path = selectedFolder();
        if (path === null) {
          return;
        }
        // Opened now, while the click still counts as the user's, so no popup blocker stops it.
        const tab = window.open('', '_blank');
        try {
          const url = await openBoard(path);
          if (tab) {
            tab.location.href = url;
          } else {
            window.open(url, '_blank');
          }
        } catch (error) {
          tab?.close();
          void showErrorMessage('TensorBoard did not open', String((error as Error).message));
        }
      }
    });
    app.contextMenu.addItem({
      command: COMMAND,
      selector: '.jp-DirListing-item[data-isdir="true"]',
      rank: 3
    });
  }
};
