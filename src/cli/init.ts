/**
 * `crm-upsert init [--crm C] [--dir D] [--template basic|sales]`: a starter crm-upsert.config.json
 * (the CRM's objects with their fields, id / key fields and links, a SQLite ledger) and an example
 * actions.jsonl, written into D (default: the current folder). `basic`: contacts, notes and tasks;
 * `sales`: contact, company and deal linked to each other, notes and tasks on any of them, and
 * one sales call written as that whole graph. It never overwrites either file (exit 2, naming it). The
 * config it writes passes the same validation `sync` applies; the actions run clean against the
 * CRM's fake (`crm-upsert fake-server`).
 */
import { constants } from 'node:fs';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { DEFAULT_CONFIG_PATH, parseConfig } from './config.js';
import { ExitCode, UsageError } from './exit.js';
import { VENDOR_NAMES, vendorOf } from './vendors.js';

export const STARTER_ACTIONS_FILE = 'actions.jsonl';
export const STARTER_LEDGER = 'sqlite:.crm-upsert/ledger.db';

export const TEMPLATES = ['basic', 'sales'] as const;
export type Template = (typeof TEMPLATES)[number];

export interface InitFlags {
  crm?: string;
  dir?: string;
  template?: Template;
}

/** The starter of `crm` for `template`. */
export const starterOf = (crm: string, template: Template = 'basic') => (template === 'sales' ? vendorOf(crm).salesStarter : vendorOf(crm).starter);

const exists = (path: string) => access(path, constants.F_OK).then(() => true, () => false);

/** The starter config for `crm`, validated as `sync` would validate it. */
export function starterConfig(crm: string, template: Template = 'basic'): Record<string, unknown> {
  const config = { crm, ledger: STARTER_LEDGER, dedupeWindowMs: 600_000, [crm]: starterOf(crm, template).section };
  parseConfig(config, `the starter config for ${crm}`);
  return config;
}

export async function initCommand(flags: InitFlags = {}): Promise<number> {
  const crm = flags.crm ?? VENDOR_NAMES[0];
  const vendor = vendorOf(crm);
  const dir = resolve(flags.dir ?? '.');
  const configPath = join(dir, DEFAULT_CONFIG_PATH);
  const actionsPath = join(dir, STARTER_ACTIONS_FILE);
  // Both checked before either is written: a refusal leaves the folder as it was.
  for (const path of [configPath, actionsPath]) {
    if (await exists(path)) throw new UsageError(`${path} already exists: init never overwrites a file (move it away, or pass --dir to write elsewhere)`);
  }
  const template = flags.template ?? 'basic';
  const config = starterConfig(crm, template);
  const starter = starterOf(crm, template);
  const { actions } = starter;
  await mkdir(dir, { recursive: true });
  // `wx`: a file created between the check and the write is still not overwritten.
  try {
    await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { flag: 'wx' });
    await writeFile(actionsPath, `${actions.map((a) => JSON.stringify(a)).join('\n')}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${(err as NodeJS.ErrnoException).path ?? 'a file'} already exists: init never overwrites a file`);
    throw err;
  }

  const objects = Object.keys((starter.section as { objects: Record<string, unknown> }).objects);
  const out = process.stdout;
  const rel = relative(process.cwd(), dir);
  const shown = (path: string) => relative(process.cwd(), path);
  out.write(`wrote ${shown(configPath)} (crm ${crm}: objects ${objects.join(', ')}; ledger ${STARTER_LEDGER})\n`);
  out.write(`wrote ${shown(actionsPath)} (${actions.length} actions; the last one ${template === 'sales' ? 'is the call\'s note delivered again' : 'is the first webhook delivered again'})\n\n`);
  const steps = [
    ...(rel ? [[`cd ${rel}`, '']] : []),
    [`crm-upsert fake-server --crm ${crm}${template === 'sales' ? ' --template sales' : ''}`, `a fake ${vendor.label} on loopback, in another terminal: add the config line and export the variables it prints`],
    ['crm-upsert check-setup', 'the id, key and allowlisted fields exist'],
    [`crm-upsert sync ${STARTER_ACTIONS_FILE}`, 'writes the actions; the repeated webhook is replayed, not written twice'],
    [`crm-upsert sync ${STARTER_ACTIONS_FILE}`, 'the same file again: 0 API calls, everything replayed'],
  ];
  const width = Math.max(...steps.map(([cmd]) => cmd!.length));
  out.write('next steps:\n');
  for (const [cmd, what] of steps) out.write(`  ${what ? `${cmd!.padEnd(width)}  # ${what}` : cmd}\n`);
  out.write(`\nagainst ${vendor.label} itself: ${starter.realCrm}\n`);
  return ExitCode.ok;
}
