/**
 * `crm-upsert schema`: the action JSON Schema (draft 2020-12), for LLM tool definitions.
 * `crm-upsert schema pull [--config PATH] [--out FILE]`: the definitions of the configured objects'
 * allowlisted fields, read from the CRM, written as crm-upsert.fields.json (sorted, deterministic:
 * review and commit it like a lockfile; point the config's `fieldDefinitions` at it).
 */
import { writeFile } from 'node:fs/promises';
import { actionJsonSchema } from '../../schemas/action.js';
import { formatFieldDefinitions } from '../../schemas/field-definitions.js';
import { ConfigError } from '../errors.js';
import { ANTHROPIC_MAX_OPTIONAL_PARAMETERS, optionalParameters, toolSchema, type SchemaDialect } from '../tool-schema.js';
import { buildAdapter, loadConfig, sectionOf } from './config.js';
import { ExitCode, plainMessage, UsageError } from './exit.js';
import { vendorOf } from './vendors.js';

export const DEFAULT_FIELDS_FILE = 'crm-upsert.fields.json';

export interface SchemaFlags {
  config: string;
  object?: string;
  for?: SchemaDialect;
}

/**
 * Without `--object`: the generic action schema (no config needed). With it: that object's strict
 * tool schema from the config's allowlist, links and field definitions, in the `--for` dialect.
 */
export async function schemaCommand(flags: SchemaFlags = { config: '' }): Promise<number> {
  if (flags.object === undefined) {
    if (flags.for !== undefined && flags.for !== 'json-schema') throw new UsageError('--for needs --object: the per-object schema is the one shaped for a provider');
    process.stdout.write(`${JSON.stringify(actionJsonSchema(), null, 2)}\n`);
    return ExitCode.ok;
  }
  const config = await loadConfig(flags.config);
  // Building the adapter sends nothing: it gets a token it never uses when none is set.
  const env = { ...process.env };
  for (const [name, value] of Object.entries(vendorOf(config.crm).dryRunEnv)) env[name] ||= value;
  const adapter = await buildAdapter(config, env, { sharedBudget: false });
  try {
    const schema = toolSchema(adapter, flags.object, { for: flags.for ?? 'json-schema' });
    process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
    const optional = optionalParameters(schema);
    if (flags.for === 'anthropic' && optional > ANTHROPIC_MAX_OPTIONAL_PARAMETERS) {
      process.stderr.write(
        `crm-upsert: this schema has ${optional} optional parameters; Anthropic refuses a request whose strict tools hold more than ${ANTHROPIC_MAX_OPTIONAL_PARAMETERS} in all. ` +
          `Send it with "strict": false (every value is still checked before anything is written), or narrow objects.${flags.object}.fields\n`,
      );
    }
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(`--object: ${plainMessage(err)}`);
    throw err;
  } finally {
    await adapter.close?.();
  }
  return ExitCode.ok;
}

export interface SchemaPullFlags {
  config: string;
  out?: string;
}

export async function schemaPullCommand(flags: SchemaPullFlags, now: () => Date = () => new Date()): Promise<number> {
  const config = await loadConfig(flags.config);
  const vendor = vendorOf(config.crm);
  if (!vendor.pullFields) throw new UsageError(`schema pull: reading field definitions from ${vendor.label} is not supported`);
  const file = await vendor.pullFields(sectionOf(config), process.env, { now: now() });
  const out = flags.out ?? DEFAULT_FIELDS_FILE;
  await writeFile(out, formatFieldDefinitions(file));
  const counts = Object.entries(file.objects).map(([object, fields]) => `${object} ${Object.keys(fields).length}`);
  process.stdout.write(`wrote ${out}: field definitions from ${vendor.label} (${file.apiVersion}, ${file.pulledAt}): ${counts.join(', ')}\n`);
  const section = sectionOf(config) as { objects: Record<string, { fields: string[] }> };
  const missing = Object.entries(section.objects).flatMap(([object, spec]) =>
    spec.fields.filter((f) => !Object.hasOwn(file.objects[object] ?? {}, f)).map((f) => `${object}.${f}`));
  if (missing.length > 0) process.stderr.write(`crm-upsert: ${missing.length} allowlisted field(s) not found in ${vendor.label}, left out: ${missing.join(', ')} (crm-upsert check-setup names the fix)\n`);
  process.stdout.write(`point the config at it: "fieldDefinitions": ${JSON.stringify(out)}\n`);
  return ExitCode.ok;
}
