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

/** "HH:MM" of the end, from the cluster's local time as squeue prints it. */
export function endsAt(card: SessionCard): string {
  return card.ends ? card.ends.slice(11, 16) : '';
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
