/**
 * The session's clock as the hub tells it: the card of this server from
 * /hub/gpuportal/sessions (spawner/sessions.py), counted down between reads.
 */

export interface SessionCard {
  name: string;
  state: string;
  left: number | null;
  ends: string | null;
  limit: string;
  maximum: string;
  extend: { add: string; label: string }[];
  /** When the idle culler would stop it (seconds), its warning, and the GPU use line. */
  cull: { reason: string | null; in: number | null; warning: string; gpu: string } | null;
}

/** Seconds before the end when the session warns, once. */
export const WARN_BEFORE_S = 15 * 60;

export function describeLeft(seconds: number): string {
  if (seconds < 60) {
    return 'under a minute left';
  }
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours && minutes) {
    return `${hours} h ${minutes} min left`;
  }
  return hours ? `${hours} h left` : `${minutes} min left`;
}

/**
 * The end as every page of the hub and the portal shows a time: 24 h, in the reader's zone,
 * and the zone named where it is not the cluster's (the card's time carries the cluster's).
 */
export function endsAt(card: SessionCard): string {
  if (!card.ends) {
    return '';
  }
  const date = new Date(card.ends);
  if (isNaN(date.getTime())) {
    return card.ends.slice(11, 16);
  }
  const options: Intl.DateTimeFormatOptions = {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23'
  };
  if (-date.getTimezoneOffset() !== clusterOffset(card.ends, date)) {
    options.timeZoneName = 'short';
  }
  return date.toLocaleTimeString([], options);
}

/** The offset from UTC (minutes) that an ISO time was written in; the reader's if none. */
function clusterOffset(iso: string, date: Date): number {
  if (iso.endsWith('Z')) {
    return 0;
  }
  const zone = /([+-])(\d\d):(\d\d)$/.exec(iso);
  if (!zone) {
    return -date.getTimezoneOffset();
  }
  const minutes = Number(zone[2]) * 60 + Number(zone[3]);
  return zone[1] === '-' ? -minutes : minutes;
}

/** Reads this server's card from the hub, with the browser's hub login cookie. */
export async function readCard(
  hubPrefix: string,
  server: string
): Promise<SessionCard | null> {
  const response = await fetch(`${hubPrefix}gpuportal/sessions`, {
    credentials: 'same-origin',
    cache: 'no-store'
  });
  if (!response.ok) {
    return null;
  }
  const body = (await response.json()) as { sessions: SessionCard[] };
  return body.sessions.find(card => card.name === server) ?? null;
}
