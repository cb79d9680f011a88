/**
 * The cluster team's notices in JupyterLab: each one showing to this user (the hub's
 * /hub/gpuportal/notices, the same answer the hub's and the portal's pages show) stays as a
 * notification until it ends or is dismissed; one that ends is taken away. Read every minute.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';

const READ_EVERY_MS = 60_000;

interface Notice {
  id: number;
  text: string;
  level: string;
}

const TYPES: Record<string, Notification.TypeOptions> = {
  info: 'info',
  warning: 'warning',
  danger: 'error'
};

async function readNotices(hubPrefix: string): Promise<Notice[] | null> {
  try {
    const response = await fetch(`${hubPrefix}gpuportal/notices`, {
      credentials: 'same-origin'
    });
    return response.ok ? ((await response.json()) as Notice[]) : null;
  } catch {
    return null;
  }
}

export const noticesPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:notices',
  description: "The cluster team's notices, as notifications while they run.",
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    const hubPrefix = PageConfig.getOption('hubPrefix');
    if (!hubPrefix) {
      return; // not started by a hub
    }
    // notice id -> the notification showing it
    const shown = new Map<number, string>();
    const look = async () => {
      const notices = await readNotices(hubPrefix);
      if (notices === null) {
        return; // the hub did not answer: keep what shows
      }
      const current = new Set(notices.map(notice => notice.id));
      for (const [id, notification] of shown) {
        if (!current.has(id)) {
          Notification.dismiss(notification);
          shown.delete(id);
        }
      }
      for (const notice of notices) {
        if (!shown.has(notice.id)) {
          const notification = Notification.emit(notice.text, TYPES[notice.level] ?? 'info', {
            autoClose: false
          });
          shown.set(notice.id, notification);
        }
      }
    };
    // After the lab is drawn: a notification emitted before the toasts' container is up is
    // counted in the notification centre but never shown.
    void app.restored.then(() => {
      void look();
      window.setInterval(() => void look(), READ_EVERY_MS);
    });
  }
};
