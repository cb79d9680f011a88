/**
 * The notebook toolbar's "Create a notebook job" on the notebook it sits on.
 *
 * Jupyter Scheduler's own toolbar command (scheduling:create-from-notebook) fills the form's
 * Input file from the file browser's selection, not from the notebook: with another file
 * selected the form ran that file, and with none (a notebook opened from a link or the
 * launcher, or before the browser had selected it) the form had no input and Create failed.
 * This command selects the notebook's own file in the file browser first, then opens the
 * scheduler's form, so the form and its checks stay Jupyter Scheduler's. The toolbar item
 * "create-job" is pointed at it in jupyter_config/labconfig/default_setting_overrides.json.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { showErrorMessage } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { IDefaultFileBrowser, IFileBrowserFactory } from '@jupyterlab/filebrowser';

export const CREATE_FROM_NOTEBOOK = 'gpuportal:create-notebook-job';
const SCHEDULER_COMMAND = 'scheduling:create-from-notebook';

export const notebookJobPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:notebook-job',
  description: 'Create a notebook job from the notebook whose toolbar was clicked.',
  autoStart: true,
  requires: [IDefaultFileBrowser, IFileBrowserFactory],
  activate: (
    app: JupyterFrontEnd,
    defaultBrowser: IDefaultFileBrowser,
    factory: IFileBrowserFactory
  ) => {
    const { commands } = app;
    commands.addCommand(CREATE_FROM_NOTEBOOK, {
      // The scheduler's own words and icon, so the button looks as its docs show it.
      label: () => commands.label(SCHEDULER_COMMAND) || 'Create a notebook job',
      caption: 'Run this notebook as a Slurm job: its parameters, environment and profile',
      icon: () => commands.icon(SCHEDULER_COMMAND),
      isEnabled: () => commands.hasCommand(SCHEDULER_COMMAND),
      execute: async () => {
        const widget = app.shell.currentWidget;
        if (!(widget instanceof DocumentWidget)) {
          return;
        }
        // The scheduler reads the selection of the file browser its tracker has current.
        const browser = factory.tracker.currentWidget ?? defaultBrowser;
        const path = widget.context.localPath;
        try {
          await browser.model.cd(`/${PathExt.dirname(path)}`);
          await browser.selectItemByName(PathExt.basename(path));
        } catch (error) {
          void showErrorMessage(
            'The notebook job form did not open',
            `${path} is not in the file browser (${(error as Error).message}): save the ` +
              'notebook, then try again.'
          );
          return;
        }
        await commands.execute(SCHEDULER_COMMAND);
      }
    });
  }
};
