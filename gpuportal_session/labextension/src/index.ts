/**
 * JupyterLab in a GPU portal session: the time left before the job's time limit in the
 * status bar, and one warning 15 minutes before the end with a way to extend it; a warning
 * before the idle culler stops an unused session (or one whose GPUs sit idle); and
 * "Open in TensorBoard" on folders (./tensorboard.ts); a Portal menu (./portal_menu.ts); the
 * cluster team's notices (./notices.ts); the notebook toolbar's "Create a notebook job" on its
 * own notebook (./notebook_job.ts); the file browser's folder listed as soon as the lab has
 * started (./early_listing.ts).
 *
 * The hub is the one source of the clock (an extension made on the hub home shows here at the
 * next read); nothing here asks Slurm.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Widget } from '@lumino/widgets';

import {
  SessionCard,
  WARN_BEFORE_S,
  describeLeft,
  endsAt,
  readCard
} from './clock';
import { earlyListingPlugin } from './early_listing';
import { notebookJobPlugin } from './notebook_job';
import { noticesPlugin } from './notices';
import { portalMenuPlugin } from './portal_menu';
import { tensorboardPlugin } from './tensorboard';

const READ_EVERY_MS = 60_000;
// A lab opened right after its start may read the card before the hub has seen the job's
// start time (a busy Slurm answers the hub's look later): read again soon, not a minute later.
const READ_SOON_MS = 5_000;
const SOON_TRIES = 12;

class TimeLeft extends Widget {
  private card: SessionCard | null = null;
  private readAt = 0;
  private warned = false;
  private cullWarned = false;
  private soonTries = 0;
  private soonTimer: number | null = null;

  constructor(private readonly hubPrefix: string, private readonly server: string) {
    super({ node: document.createElement('a') });
    this.addClass('gp-time-left');
    const link = this.node as HTMLAnchorElement;
    link.href = `${hubPrefix}home`;
    link.target = '_blank';
    link.rel = 'noopener';
  }

  async read(): Promise<void> {
    try {
      const card = await readCard(this.hubPrefix, this.server);
      if (card && card.left !== null) {
        // A longer limit (extended on the hub home) may warn again later.
        if (this.card && card.left > this.leftNow() + 60) {
          this.warned = card.left <= WARN_BEFORE_S;
        }
        this.card = card;
        this.readAt = Date.now();
      }
      if (card) {
        this.warnOfCull(card);
      }
    } catch {
      // The hub is restarting or the network blinked: keep counting from the last read.
    }
    this.tick();
    if (!this.card && this.soonTimer === null && this.soonTries < SOON_TRIES) {
      this.soonTries += 1;
      this.soonTimer = window.setTimeout(() => {
        this.soonTimer = null;
        void this.read();
      }, READ_SOON_MS);
    }
  }

  leftNow(): number {
    if (!this.card || this.card.left === null) {
      return Infinity;
    }
    return Math.max(0, this.card.left - Math.floor((Date.now() - this.readAt) / 1000));
  }

  tick(): void {
    if (!this.card) {
      this.node.textContent = '';
      return;
    }
    const left = this.leftNow();
    this.node.textContent = `Session: ${describeLeft(left)}`;
    this.node.title =
      `Your session ends at ${endsAt(this.card)} (time limit ${this.card.limit}` +
      (this.card.maximum ? `, at most ${this.card.maximum}` : '') +
      '). Click to see your sessions on the hub, where you can extend it.';
    this.toggleClass('gp-soon', left <= WARN_BEFORE_S);
    if (left <= WARN_BEFORE_S && !this.warned) {
      this.warned = true;
      this.warn(left);
    }
  }

  /** Once per idle spell: used again (the cull moves away), it may warn again later. */
  private warnOfCull(card: SessionCard): void {
    const cull = card.cull;
    const soon = !!cull && cull.in !== null && cull.in <= WARN_BEFORE_S && !!cull.warning;
    if (soon && !this.cullWarned) {
      Notification.warning(`${(cull as { warning: string }).warning} Your files are kept.`, {
        autoClose: false
      });
    }
    this.cullWarned = soon;
  }

  private warn(left: number): void {
    const card = this.card as SessionCard;
    const actions: Notification.IAction[] = [];
    if (card.extend.length) {
      actions.push({
        label: 'Extend on the hub',
        callback: () => window.open(`${this.hubPrefix}home`, '_blank', 'noopener')
      });
    }
    const more = card.extend.length
      ? 'Save your work, or extend the session.'
      : 'Save your work: this session is at its profile\'s maximum time.';
    Notification.warning(
      `Your session ends at ${endsAt(card)} (${describeLeft(left)}). ${more}`,
      { autoClose: false, actions }
    );
  }
}

const timeLeftPlugin: JupyterFrontEndPlugin<void> = {
  id: '@gpuportal/session:time-left',
  description: 'The time left in a GPU portal session, and a warning before its end.',
  autoStart: true,
  optional: [IStatusBar],
  activate: (_app: JupyterFrontEnd, statusBar: IStatusBar | null) => {
    const hubPrefix = PageConfig.getOption('hubPrefix');
    if (!hubPrefix) {
      return; // not started by a hub
    }
    const item = new TimeLeft(hubPrefix, PageConfig.getOption('hubServerName'));
    if (statusBar) {
      statusBar.registerStatusItem('@gpuportal/session:time-left', {
        item,
        align: 'left',
        rank: 1000
      });
    }
    void item.read();
    window.setInterval(() => void item.read(), READ_EVERY_MS);
    // Back from the hub tab (where the session may have been extended): read at once.
    window.addEventListener('focus', () => void item.read());
    window.setInterval(() => item.tick(), 1000);
  }
};

export default [
  timeLeftPlugin,
  tensorboardPlugin,
  portalMenuPlugin,
  noticesPlugin,
  notebookJobPlugin,
  earlyListingPlugin
];
