/**
 * Drift: how the field definitions file (crm-upsert.fields.json, as `schema pull` wrote it) differs
 * from the definitions the CRM answers now. Pure: the file and a fresh pull in, one entry per
 * object, field and kind of change out, each with its severity.
 *
 * - `problem`: a write the file allows is now refused by the CRM (a field gone, a type changed,
 *   options removed from a restricted list, a shorter length, read-only now, ...).
 * - `warning`: the file is narrower than the CRM (options added, a longer length, a new field), or
 *   a value it allows is now hidden but still accepted: the engine refuses what the CRM would take;
 *   or an option the file marks hidden is shown again (tool schemas still leave it out).
 *
 * `crm-upsert schema pull` refreshes the file either way.
 */
import { hiddenOptionValues, optionValues, type FieldDefinition, type FieldDefinitionsFile } from './field-definitions.js';

export const DriftKind = {
  /** The file defines the field; the CRM no longer has it (or this user cannot see it). */
  gone: 'gone',
  type: 'type',
  /** Single-select became multi-select, or the other way. */
  multiple: 'multiple',
  optionsRemoved: 'options-removed',
  /** Options the CRM still lists but hides (HubSpot `hidden`) or has deactivated (Salesforce `active: false`). */
  optionsInactive: 'options-inactive',
  /** Options the file marks hidden that the CRM shows again. */
  optionsShown: 'options-shown',
  optionsAdded: 'options-added',
  maxLength: 'max-length',
  restricted: 'restricted',
  readOnly: 'read-only',
  /** An allowlisted field the CRM has and the file lacks. */
  added: 'added',
  /** The stages now name their pipeline (the file checks a stage against every pipeline's stages). */
  pipelines: 'pipelines',
} as const;
export type DriftKind = (typeof DriftKind)[keyof typeof DriftKind];

export interface FieldDrift {
  object: string;
  field: string;
  kind: DriftKind;
  severity: 'problem' | 'warning';
  /** What changed and what it means for a write, one sentence without the field's name. */
  detail: string;
  /** The option values added, removed or now inactive, in the order the file or the CRM lists them. */
  values?: string[];
}

export interface DriftOptions {
  /**
   * Logical object -> its allowlisted fields now. File fields outside it are not compared (a pull
   * leaves them out). Default: every field the file defines for an object the pull covers.
   */
  allowlist?: Readonly<Record<string, readonly string[]>>;
  /**
   * Logical object -> field -> options the CRM still lists but has deactivated (a pull leaves
   * them out), and whether the CRM refuses them in a write (a restricted Salesforce picklist
   * does). Options a pull keeps marked `hidden` (HubSpot) need none: the definitions say it.
   * Default none.
   */
  inactive?: Readonly<Record<string, Readonly<Record<string, { values: readonly string[]; refused: boolean }>>>>;
}

/** How many option values a detail names before `and N more`. */
export const DRIFT_LIST_LIMIT = 20;

/** `a, b, c` or, past `limit`, the first `limit` and `and N more`. */
export function listValues(values: readonly string[], limit = DRIFT_LIST_LIMIT): string {
  const shown = values.slice(0, limit).join(', ');
  return values.length > limit ? `${shown} and ${values.length - limit} more` : shown;
}

const options = (n: number) => `${n} option${n === 1 ? '' : 's'}`;
const them = (n: number) => (n === 1 ? 'it' : 'them');
const multiple = (d: FieldDefinition) => d.multiple === true;
const restricted = (d: FieldDefinition) => d.restricted !== false;
const readOnly = (d: FieldDefinition) => d.readOnly === true;
const kindOf = (d: FieldDefinition) => (d.type === 'enumeration' && multiple(d) ? 'multi-select enumeration' : d.type);

/**
 * Every drift of the file against `pulled` (the CRM's definitions now, for the configured objects'
 * allowlisted fields), ordered by object and field as `pulled` and the file list them.
 */
export function compareFieldDefinitions(file: FieldDefinitionsFile, pulled: FieldDefinitionsFile, options: DriftOptions = {}): FieldDrift[] {
  const drifts: FieldDrift[] = [];
  for (const [object, now] of Object.entries(pulled.objects)) {
    const before = file.objects[object] ?? {};
    const allowlisted = options.allowlist?.[object];
    const names = [...new Set([...Object.keys(before).filter((f) => !allowlisted || allowlisted.includes(f)), ...Object.keys(now)])];
    for (const field of names) {
      const was = before[field];
      const is = now[field];
      const add = (kind: DriftKind, severity: FieldDrift['severity'], detail: string, values?: string[]) =>
        drifts.push({ object, field, kind, severity, detail, ...(values ? { values } : {}) });
      if (!is) add(DriftKind.gone, 'problem', 'the file defines it, but the CRM no longer has it (or this user cannot see it): every write carrying it is refused');
      else if (!was) add(DriftKind.added, 'warning', `the CRM has it (${kindOf(is)}), the file does not: its values go to the CRM unchecked`);
      else compareField(was, is, options.inactive?.[object]?.[field], add);
    }
  }
  return drifts;
}

type Add = (kind: DriftKind, severity: FieldDrift['severity'], detail: string, values?: string[]) => void;

/** Text types narrower than `string` that a pull may type a field the file has as `string`. */
const TEXT_KINDS: Record<string, string> = { email: 'an email address', phone: 'a phone number', url: 'a URL' };

function compareField(was: FieldDefinition, is: FieldDefinition, inactive: { values: readonly string[]; refused: boolean } | undefined, add: Add): void {
  // The file lets through text the CRM refuses at the write: nothing the file allows is lost.
  if (was.type === 'string' && TEXT_KINDS[is.type] !== undefined) {
    add(DriftKind.type, 'warning', `typed ${is.type} now (the file says string): text that is not ${TEXT_KINDS[is.type]} is refused by the CRM, not before the request`);
    return;
  }
  if (is.type === 'string' && TEXT_KINDS[was.type] !== undefined) {
    add(DriftKind.type, 'warning', `typed string now (the file says ${was.type}): the file still refuses text that is not ${TEXT_KINDS[was.type]}, the CRM would store it`);
    return;
  }
  if (was.type !== is.type) {
    add(DriftKind.type, 'problem', `type changed from ${was.type} (file) to ${is.type} (CRM): values the file allows and normalizes may be refused`);
    return;
  }
  if (readOnly(is) !== readOnly(was)) {
    if (readOnly(is)) add(DriftKind.readOnly, 'problem', 'read-only now: every write carrying it is refused');
    else add(DriftKind.readOnly, 'warning', 'writable now: the file still refuses every value of it');
  }
  if (was.type === 'enumeration') compareOptions(was, is, inactive, add);
  if (was.type === 'enumeration' && was.pipelineField === undefined && is.pipelineField !== undefined) {
    add(DriftKind.pipelines, 'warning', `its stages now keep their pipeline (${is.pipelineField}): the file checks a stage against every pipeline's stages, so a stage outside the action's pipeline reaches the CRM`);
  }
  if (was.maxLength !== is.maxLength) {
    const shorter = is.maxLength !== undefined && (was.maxLength === undefined || is.maxLength < was.maxLength);
    const from = was.maxLength === undefined ? 'no limit' : String(was.maxLength);
    const to = is.maxLength === undefined ? 'no limit' : String(is.maxLength);
    if (shorter) add(DriftKind.maxLength, 'problem', `length changed from ${from} to ${to} characters: longer values the file allows are refused`);
    else add(DriftKind.maxLength, 'warning', `length changed from ${from} to ${to} characters: the file still refuses values over ${from}`);
  }
}

function compareOptions(was: FieldDefinition, is: FieldDefinition, inactive: { values: readonly string[]; refused: boolean } | undefined, add: Add): void {
  if (multiple(was) !== multiple(is)) {
    if (multiple(was)) add(DriftKind.multiple, 'problem', 'single-select now (it was multi-select): a value of several options is refused');
    else add(DriftKind.multiple, 'warning', 'multi-select now (it was single-select): the file still refuses several options at once');
  }
  if (restricted(was) !== restricted(is)) {
    if (restricted(is)) add(DriftKind.restricted, 'problem', 'restricted now: values outside its options are refused');
    else add(DriftKind.restricted, 'warning', 'unrestricted now: the CRM stores any value, the file still refuses values outside its options');
  }
  const before = optionValues(was);
  const now = new Set(optionValues(is));
  const hidden = new Set(inactive?.values ?? []);
  const removed = before.filter((v) => !now.has(v) && !hidden.has(v));
  const deactivated = before.filter((v) => !now.has(v) && hidden.has(v));
  // Options both list, hidden (HubSpot) on one side only: the CRM takes them either way.
  const hiddenBefore = new Set(hiddenOptionValues(was));
  const hiddenNow = new Set(hiddenOptionValues(is));
  const nowHidden = before.filter((v) => now.has(v) && hiddenNow.has(v) && !hiddenBefore.has(v));
  const shown = before.filter((v) => now.has(v) && hiddenBefore.has(v) && !hiddenNow.has(v));
  const known = new Set(before);
  const added = [...now].filter((v) => !known.has(v));
  if (removed.length > 0) {
    const stored = !restricted(is);
    add(DriftKind.optionsRemoved, stored ? 'warning' : 'problem',
      `${options(removed.length)} removed in the CRM: ${listValues(removed)}${stored ? ` (the list is unrestricted: the CRM still stores ${them(removed.length)})` : `: the file still allows ${them(removed.length)}, the CRM refuses ${them(removed.length)}`}`, removed);
  }
  if (deactivated.length > 0) {
    const refused = inactive?.refused === true && restricted(is);
    add(DriftKind.optionsInactive, refused ? 'problem' : 'warning',
      `${options(deactivated.length)} now hidden or inactive in the CRM: ${listValues(deactivated)}${refused ? `: the file still allows ${them(deactivated.length)}, the CRM refuses ${them(deactivated.length)}` : ` (the CRM still accepts ${them(deactivated.length)} in a write)`}`, deactivated);
  }
  if (nowHidden.length > 0) {
    add(DriftKind.optionsInactive, 'warning', `${options(nowHidden.length)} now hidden or inactive in the CRM: ${listValues(nowHidden)} (the CRM still accepts ${them(nowHidden.length)} in a write)`, nowHidden);
  }
  if (shown.length > 0) {
    add(DriftKind.optionsShown, 'warning', `${options(shown.length)} shown again in the CRM: ${listValues(shown)} (the file marks ${them(shown.length)} hidden: tool schemas still leave ${them(shown.length)} out)`, shown);
  }
  if (added.length > 0) add(DriftKind.optionsAdded, 'warning', `${options(added.length)} added in the CRM: ${listValues(added)}: the file refuses ${them(added.length)} before any request`, added);
}
