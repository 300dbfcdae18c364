/**
 * Who holds a claim, and whether that holder is a dead process on this host.
 *
 * Every claim records `host pid start`: the host (hostname, kernel boot and pid namespace, so two
 * containers sharing a hostname never read each other's pids), the process id, and the process's
 * start time as the kernel counts it (so a pid reused by a later process is not mistaken for the
 * holder). A claim whose holder is a dead process on this host is taken over at once instead of
 * waiting for its lease: a re-run right after `kill -9` finishes the job. Across hosts, and where
 * the start time cannot be read, the lease alone decides.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

const tryRead = (read: () => string): string => {
  try {
    return read().trim();
  } catch {
    return '';
  }
};

/** The process start time in clock ticks after boot (field 22 of /proc/PID/stat), or '' where unknown. */
export function processStart(pid: number): string {
  const stat = tryRead(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return rest[19] ?? '';
}

let cachedHost: string | undefined;

/** This host as claims name it: hostname plus, on Linux, a hash of the boot id and pid namespace. */
export function hostId(): string {
  if (cachedHost === undefined) {
    const boot = tryRead(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
    const pidns = tryRead(() => readlinkSync('/proc/self/ns/pid'));
    const salt = boot || pidns ? `#${createHash('sha256').update(`${boot}|${pidns}`).digest('base64url').slice(0, 10)}` : '';
    cachedHost = `${hostname().replace(/\s+/g, '_')}${salt}`;
  }
  return cachedHost;
}

export interface Owner {
  host: string;
  pid: number;
  /** '' where the start time cannot be read. */
  start: string;
}

let self: string | undefined;

/** This process, as stored in the `owner` of every claim it takes. */
export function ownerId(): string {
  self ??= formatOwner({ host: hostId(), pid: process.pid, start: processStart(process.pid) });
  return self;
}

export const formatOwner = (o: Owner): string => `${o.host} ${o.pid} ${o.start}`.trimEnd();

export function parseOwner(value: string | null | undefined): Owner | undefined {
  if (!value) return undefined;
  const [host, pid, start = ''] = value.split(' ');
  const n = Number(pid);
  return host && Number.isInteger(n) && n > 0 ? { host, pid: n, start } : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True only when the owner is surely a dead process on this host: same host id, and its pid is
 * gone or now belongs to a process that started at another time. Anything uncertain is false.
 */
export function isDeadLocalOwner(value: string | null | undefined): boolean {
  const owner = parseOwner(value);
  if (!owner || owner.host !== hostId()) return false;
  if (owner.pid === process.pid) return owner.start !== '' && owner.start !== processStart(process.pid);
  if (!alive(owner.pid)) return true;
  if (owner.start === '') return false;
  const now = processStart(owner.pid);
  return now !== '' && now !== owner.start;
}
