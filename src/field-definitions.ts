/**
 * Loading field definitions for an adapter: the parsed crm-upsert.fields.json, or its path. A
 * file that does not parse, does not match the format, or was pulled from another CRM is refused
 * when the adapter is built, naming the file and the problem.
 */
import { readFileSync } from 'node:fs';
import { fieldDefinitionsFileSchema, type FieldDefinitionsFile } from '../schemas/field-definitions.js';
import { formatZodIssues } from '../schemas/parse.js';
import { ConfigError } from './errors.js';

export function loadFieldDefinitions(value: FieldDefinitionsFile | string, crm: string): FieldDefinitionsFile {
  const where = typeof value === 'string' ? value : 'the fieldDefinitions option';
  let raw: unknown = value;
  if (typeof value === 'string') {
    try {
      raw = JSON.parse(readFileSync(value, 'utf8'));
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (crm-upsert schema pull writes it)' : (err as Error).message;
      throw new ConfigError(`field definitions ${where}: ${reason}`);
    }
  }
  const parsed = fieldDefinitionsFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(`field definitions ${where}: ${formatZodIssues(parsed.error, { input: raw }).map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  }
  if (parsed.data.crm !== crm) throw new ConfigError(`field definitions ${where} were pulled from ${parsed.data.crm}, not ${crm}: pull them again (crm-upsert schema pull)`);
  return parsed.data;
}
